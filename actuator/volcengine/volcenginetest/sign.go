package volcenginetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// authResult is what verifyRequest learnt from the Authorization header.
type authResult struct {
	service, region string
	err             error
}

// maxClockSkew is how far X-Date may be from the fake's clock.
const maxClockSkew = 15 * time.Minute

// verifyRequest checks the Volcengine HMAC-SHA256 signature:
//
//	Authorization: HMAC-SHA256 Credential=AK/yyyymmdd/region/service/request, SignedHeaders=a;b, Signature=hex
//
// It rebuilds the canonical request (method, path, sorted query with %20
// for spaces, the signed headers as "name:value\n", the signed header list,
// the hex SHA-256 of the body), the string to sign
// ("HMAC-SHA256\n" X-Date "\n" scope "\n" hex(SHA-256(canonical))), derives
// the key HMAC(HMAC(HMAC(HMAC(secret, date), region), service), "request")
// and compares signatures in constant time. It is written from the
// published algorithm, independently of the SDK's signer.
func verifyRequest(r *http.Request, body []byte, accessKey, secretKey, region string, now time.Time) authResult {
	var res authResult
	h := r.Header.Get("Authorization")
	if h == "" {
		res.err = errors.New("the request has no Authorization header")
		return res
	}
	algo, rest, ok := strings.Cut(h, " ")
	if !ok || algo != "HMAC-SHA256" {
		res.err = fmt.Errorf("authorization algorithm %q is not HMAC-SHA256", algo)
		return res
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			res.err = fmt.Errorf("malformed authorization component %q", part)
			return res
		}
		fields[k] = v
	}
	cred, signed, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if cred == "" || signed == "" || sig == "" {
		res.err = errors.New("authorization lacks Credential, SignedHeaders or Signature")
		return res
	}
	scope := strings.Split(cred, "/")
	if len(scope) != 5 || scope[4] != "request" {
		res.err = fmt.Errorf("credential %q is not AK/date/region/service/request", redactAK(cred))
		return res
	}
	ak, date, credRegion, service := scope[0], scope[1], scope[2], scope[3]
	res.service, res.region = service, credRegion
	switch {
	case ak != accessKey:
		res.err = errors.New("the access key is not known")
		return res
	case credRegion != region:
		res.err = fmt.Errorf("credential region %q, want %q", credRegion, region)
		return res
	}
	xdate := r.Header.Get("X-Date")
	t, err := time.Parse("20060102T150405Z", xdate)
	if err != nil {
		res.err = fmt.Errorf("X-Date %q is not yyyyMMddTHHmmssZ", xdate)
		return res
	}
	if d := now.Sub(t); d > maxClockSkew || d < -maxClockSkew {
		res.err = fmt.Errorf("X-Date %s is more than %s from the server clock", xdate, maxClockSkew)
		return res
	}
	if date != xdate[:8] {
		res.err = fmt.Errorf("credential date %s does not match X-Date %s", date, xdate)
		return res
	}
	bodyHash := sha256Hex(body)
	if got := r.Header.Get("X-Content-Sha256"); got != "" && got != bodyHash {
		res.err = errors.New("X-Content-Sha256 does not match the body")
		return res
	}
	names := strings.Split(signed, ";")
	if !sort.StringsAreSorted(names) {
		res.err = errors.New("SignedHeaders are not sorted")
		return res
	}
	hasHost, hasDate := false, false
	var canonHeaders strings.Builder
	for _, name := range names {
		var value string
		switch name {
		case "host":
			hasHost = true
			value = r.Host
			if host, port, ok := strings.Cut(value, ":"); ok && (port == "80" || port == "443") {
				value = host
			}
		default:
			if name == "x-date" {
				hasDate = true
			}
			value = strings.TrimSpace(r.Header.Get(name))
		}
		canonHeaders.WriteString(name + ":" + value + "\n")
	}
	if !hasHost || !hasDate {
		res.err = errors.New("SignedHeaders must include host and x-date")
		return res
	}
	query, _ := url.ParseQuery(r.URL.RawQuery)
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canonical := strings.Join([]string{
		r.Method,
		path,
		strings.ReplaceAll(query.Encode(), "+", "%20"),
		canonHeaders.String(),
		signed,
		bodyHash,
	}, "\n")
	stringToSign := strings.Join([]string{"HMAC-SHA256", xdate, strings.Join(scope[1:], "/"), sha256Hex([]byte(canonical))}, "\n")
	key := hmacSHA256([]byte(secretKey), date)
	key = hmacSHA256(key, credRegion)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "request")
	want := hex.EncodeToString(hmacSHA256(key, stringToSign))
	if !hmac.Equal([]byte(want), []byte(sig)) {
		res.err = errors.New("the request signature does not match the signature computed with the secret key")
	}
	return res
}

func redactAK(cred string) string {
	if i := strings.Index(cred, "/"); i > 4 {
		return cred[:4] + "…" + cred[i:]
	}
	return "…"
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}
