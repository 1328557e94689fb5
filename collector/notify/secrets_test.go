package notify

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/redact"
)

// spellings are the forms a secret is checked for: raw, URL-escaped, and
// base64 (of the secret and of a Basic-style "user:secret").
func spellings(secret string) []string {
	return []string{secret, url.QueryEscape(secret), url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)), base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.StdEncoding.EncodeToString([]byte("user:" + secret))}
}

// echoReceiver answers with status and a body quoting the request it got
// (method, URL, headers, body) raw, URL-escaped and in base64, as a proxy's
// error page or a misconfigured gateway may; robot is a 200 with errcode.
func echoReceiver(t *testing.T, status int, robot bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.String())
		for k, v := range r.Header {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(v, ","))
		}
		b.Write(body)
		dump := b.String()
		echo := dump + "\n" + url.QueryEscape(dump) + "\n" + base64.StdEncoding.EncodeToString([]byte(dump))
		if robot {
			fmt.Fprintf(w, `{"errcode":310000,"errmsg":%q}`, echo)
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, echo)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// No secret leaves through a webhook, whatever the receiver echoes: not the
// webhook's own token, DingTalk secret or access_token, WeCom key, nor a
// secret of the collector's (here an InfluxDB token quoted in an event's
// reason), in the error Post returns or in the payload sent.
func TestWebhookNeverLeaksSecrets(t *testing.T) {
	const (
		bearer      = "b3arer/t0ken+release="
		accessToken = "dt-access/t0ken+x=="
		signSecret  = "SECdingtalk+sign/secret"
		wecomKey    = "wc-k3y/693a91f6+x"
		influxToken = "influx:p@ss/w0rd+tok"
	)
	collectorSecrets := redact.New(influxToken)
	event := idle
	event.Reason = "store error: Authorization: Token " + influxToken
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError, 0} {
		srv := echoReceiver(t, status, status == 0)
		hooks := []*Webhook{
			{Name: "release", URL: srv.URL + "/api/v1/release", Format: FormatJSON, Token: bearer, Redactor: collectorSecrets},
			{Name: "dt", URL: srv.URL + "/robot/send?access_token=" + url.QueryEscape(accessToken), Format: FormatDingTalk,
				Secret: signSecret, Redactor: collectorSecrets},
			{Name: "wc", URL: srv.URL + "/cgi-bin/webhook/send?key=" + url.QueryEscape(wecomKey), Format: FormatWeCom, Redactor: collectorSecrets},
		}
		for _, w := range hooks {
			if status == 0 && w.Format == FormatJSON {
				continue // errcode replies are a robots' convention
			}
			t.Run(fmt.Sprintf("%s/%d", w.Name, status), func(t *testing.T) {
				err := w.Post(context.Background(), event)
				if err == nil {
					t.Fatal("Post to an echoing receiver that refuses: no error")
				}
				body, _ := w.Body(event)
				sent := string(w.clean(body))
				for _, secret := range []string{bearer, accessToken, signSecret, wecomKey, influxToken} {
					for _, form := range spellings(secret) {
						if strings.Contains(err.Error(), form) {
							t.Errorf("error holds %q: %v", form, err)
						}
						if strings.Contains(sent, form) {
							t.Errorf("payload holds %q: %s", form, sent)
						}
					}
				}
			})
		}
	}
}

// FuzzCheckReply feeds arbitrary receiver answers (status, body with the
// webhook's token spliced in anywhere) to the reply check. It must never
// panic; a 2xx without a robot errcode is a success; anything else is an
// error that never holds the token and quotes a bounded part of the reply;
// a 4xx other than 408 and 429 is ErrRefused.
//
//	go test -run='^$' -fuzz=FuzzCheckReply -fuzztime=20s ./collector/notify
func FuzzCheckReply(f *testing.F) {
	f.Add(200, []byte(`{"errcode":0,"errmsg":"ok"}`), 3, true)
	f.Add(200, []byte(`{"errcode":310000,"errmsg":"sign not match"}`), 30, true)
	f.Add(401, []byte(`Authorization: Bearer `), 22, false)
	f.Add(503, []byte(strings.Repeat("é", 300)), 101, false)
	f.Add(429, []byte{}, 0, false)
	const token = "t0ken/with+odd=chars"
	f.Fuzz(func(t *testing.T, code int, reply []byte, at int, robot bool) {
		if code < 100 || code > 999 {
			return
		}
		at = min(max(at, 0), len(reply))
		spliced := append(append(append([]byte{}, reply[:at]...), token...), reply[at:]...)
		w := &Webhook{Name: "w", URL: "http://127.0.0.1:1/hook", Format: FormatJSON, Token: token}
		if robot {
			w.Format = FormatDingTalk
		}
		err := w.checkReply(code, "", spliced)
		if code/100 == 2 {
			if err != nil && !robot {
				t.Fatalf("HTTP %d: %v, want success", code, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("HTTP %d accepted", code)
		}
		refused := code/100 == 4 && code != 408 && code != 429
		if got := errors.Is(err, ErrRefused); got != refused {
			t.Fatalf("HTTP %d: ErrRefused = %v, want %v", code, got, refused)
		}
		if strings.Contains(err.Error(), token) {
			t.Fatalf("error holds the token: %v", err)
		}
		if len(err.Error()) > 2*maxQuoted+200 {
			t.Fatalf("error of %d bytes", len(err.Error()))
		}
	})
}
