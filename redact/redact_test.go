package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

const secret = "s3cr+t/Key=="

func TestEverySpellingIsRedacted(t *testing.T) {
	r := New(secret, "", "abc")
	tests := []struct{ name, text string }{
		{"raw", "token " + secret + " rejected"},
		{"query escaped", "GET /write?token=" + url.QueryEscape(secret) + "&db=x"},
		{"path escaped", "/v1/" + url.PathEscape(secret) + "/x"},
		{"base64", "X-Echo: " + base64.StdEncoding.EncodeToString([]byte(secret))},
		{"base64 url", base64.URLEncoding.EncodeToString([]byte(secret))},
		{"inside basic auth", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+secret))},
		{"inside basic auth, shifted", "Basic " + base64.StdEncoding.EncodeToString([]byte("ad:"+secret+"!"))},
		{"inside base64, raw url", base64.RawURLEncoding.EncodeToString([]byte("x" + secret + "yz"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.text)
			if !strings.Contains(got, Mask) {
				t.Fatalf("%q: nothing redacted", got)
			}
			if leaked(got) {
				t.Fatalf("%q still carries the secret", got)
			}
		})
	}
	if got := r.String("abc and friends"); got != "abc and friends" {
		t.Fatalf("a short value was treated as a secret: %q", got)
	}
}

// leaked reports whether text holds the secret in a form the test can
// decode: raw, unescaped, or base64 at any offset.
func leaked(text string) bool {
	if strings.Contains(text, secret) {
		return true
	}
	if u, err := url.QueryUnescape(text); err == nil && strings.Contains(u, secret) {
		return true
	}
	for _, field := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ':' }) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(field); err == nil && bytes.Contains(b, []byte(secret)) {
				return true
			}
		}
	}
	return false
}

func TestErrorKeepsItsChain(t *testing.T) {
	r := New(secret)
	inner := fmt.Errorf("query ?token=%s: %w", secret, fs.ErrNotExist)
	got := r.Error(inner)
	if strings.Contains(got.Error(), secret) || !errors.Is(got, fs.ErrNotExist) {
		t.Fatalf("Error = %q (errors.Is %v)", got, errors.Is(got, fs.ErrNotExist))
	}
	clean := errors.New("nothing here")
	if r.Error(clean) != clean {
		t.Fatal("an error without secrets must come back unchanged")
	}
	var nilR *Redactor
	if nilR.String(secret) != secret || nilR.Error(clean) != clean {
		t.Fatal("a nil Redactor must pass text through")
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	r := New()
	w := r.Writer(&buf)
	r.Add(secret) // added after the writer was made, e.g. read from a file
	n, err := fmt.Fprintf(w, "level=WARN msg=failed err=%q\n", "401: "+secret)
	if err != nil || n == 0 {
		t.Fatal(n, err)
	}
	if strings.Contains(buf.String(), secret) || !strings.Contains(buf.String(), Mask) {
		t.Fatalf("log line %q", buf.String())
	}
}

func FuzzRedactNeverLeaksRaw(f *testing.F) {
	f.Add("prefix "+secret+" suffix", secret)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, s string) {
		r := New(s)
		got := r.String(text + s + text)
		if len(s) >= MinSecretLen && !strings.Contains(Mask, s) && strings.Contains(got, s) {
			t.Fatalf("secret %q survives in %q", s, got)
		}
	})
}

// Snippet redacts before it shortens: a secret that straddles the cut
// leaves no piece behind, and the result is one line of at most the
// length asked for (plus "...").
func TestSnippetRedactsBeforeCutting(t *testing.T) {
	r := New(secret)
	for cut := 0; cut < 40; cut++ {
		text := strings.Repeat("x", cut) + "Bearer " + secret + "\nmore text"
		got := r.Snippet(text, 20)
		if strings.Contains(got, secret[:4]) || strings.Contains(got, "\n") || len(got) > 20+len("...") {
			t.Fatalf("Snippet(%q, 20) = %q", text, got)
		}
	}
	if got := r.Snippet("héllo wörld", 2); got != "h..." {
		t.Errorf("cut inside a character: %q", got)
	}
	if got := (*Redactor)(nil).Snippet("short", 10); got != "short" {
		t.Errorf("nil redactor: %q", got)
	}
}
