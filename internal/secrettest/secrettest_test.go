package secrettest

import (
	"encoding/base64"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Every way a secret can leave a binary through an echo is found: raw,
// escaped, in a header's base64, and inside the base64 of a longer text at
// any byte offset.
func TestFindEverySpelling(t *testing.T) {
	const secret = "s3cr3t/t0ken+x="
	for _, tt := range []struct {
		name, text string
	}{
		{"raw", "error: " + secret + " refused"},
		{"query-escaped", "GET /?token=" + url.QueryEscape(secret)},
		{"bearer in base64", base64.StdEncoding.EncodeToString([]byte("Bearer " + secret))},
		{"offset 0 in base64", base64.StdEncoding.EncodeToString([]byte(secret + "tail"))},
		{"offset 1 in base64", base64.StdEncoding.EncodeToString([]byte("a" + secret + "tail"))},
		{"offset 2 in base64", base64.URLEncoding.EncodeToString([]byte("ab" + secret + "tail"))},
		{"basic password", base64.StdEncoding.EncodeToString([]byte("user:" + secret))},
		{"cut after most of it", "Authorization: Bearer " + secret[:len(secret)-3] + "..."},
		{"cut before the start", "..." + secret[4:] + " refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if found := Find(map[string]string{"out": tt.text}, []string{secret}); len(found) == 0 {
				t.Errorf("%q: secret not found", tt.text)
			}
		})
	}
	if found := Find(map[string]string{"out": "nothing secret here [REDACTED] s3cr3t/ (a short piece)"}, []string{secret}); found != nil {
		t.Errorf("found %v in a clean text", found)
	}
}

// Echo quotes the headers and body raw, escaped and in base64.
func TestEcho(t *testing.T) {
	r := httptest.NewRequest("POST", "/write?db=x", strings.NewReader("body-s3cret"))
	r.Header.Set("Authorization", "Token tok3n-value")
	echo := Echo(r, nil)
	found := Find(map[string]string{"echo": echo}, []string{"tok3n-value", "body-s3cret"})
	if PerOutput(found)["echo"] < 6 {
		t.Errorf("the echo should quote each secret raw, escaped and in base64: %v\n%s", found, echo)
	}
}
