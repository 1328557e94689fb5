// Package secrettest holds what the secrets tests of prewarm's binaries
// share: the text an echoing upstream sends back (a proxy's error page, a
// misconfigured gateway quoting the request it refused), and the spellings
// in which a secret must not appear in any output.
//
// A secrets test sets every secret to a known value, points every upstream
// at a server that answers with Echo, runs the real binary and checks its
// stdout, stderr, audit log and API answers with Find: the test passes
// when Find returns nothing.
package secrettest

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Echo returns the request as an upstream may quote it: its method, URL
// (with the query), headers and body, then the same text URL-escaped and
// in base64, so that each spelling the redactor must know is on the
// wire. It reads r.Body; body, when not nil, is used instead (for a
// handler that has read the body already).
func Echo(r *http.Request, body []byte) string {
	if body == nil && r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.String())
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ","))
	}
	b.Write(body)
	dump := b.String()
	return dump + "\n" + url.QueryEscape(dump) + "\n" + base64.StdEncoding.EncodeToString([]byte(dump))
}

// Spellings lists the forms a secret must not appear in: raw, URL-escaped
// (query and path), base64 in both alphabets with and without padding,
// base64 of the Authorization header values that carry it ("Token s",
// "Bearer s"), and the core of its base64 at each of the three byte
// offsets it can have inside a longer encoded text (an echoed request in
// base64, a Basic header's "user:s"): the characters that also depend on
// the neighbouring bytes are left out, so the core matches wherever s is.
func Spellings(secret string) []string {
	var out []string
	add := func(s string) {
		for _, have := range out {
			if have == s {
				return
			}
		}
		out = append(out, s)
	}
	add(secret)
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	for _, s := range []string{secret, "Token " + secret, "Bearer " + secret} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(s)))
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for offset := range 3 {
			b := enc.EncodeToString(append(make([]byte, offset), secret...))
			first := (offset*8 + 5) / 6 // the first character free of the padding bytes
			if last := len(b) - 1; last-first >= 6 {
				add(b[first:last])
			}
		}
	}
	return out
}

// Finding is one secret found in one output.
type Finding struct {
	// Output names where it was found ("stderr", "/api/v1/pools", ...).
	Output string
	// Secret is the secret, Form the spelling found.
	Secret, Form string
	// Count is how often Form occurs in the output.
	Count int
}

func (f Finding) String() string {
	return fmt.Sprintf("%s holds secret %q as %q %d times", f.Output, f.Secret, f.Form, f.Count)
}

// Fragments lists the raw prefixes and suffixes of a secret that are at
// least half of it (and at least 8 bytes): what is left when a message
// quoting a request is shortened before it is redacted, which the
// redactor, knowing only whole secrets, cannot mask.
func Fragments(secret string) []string {
	var out []string
	for n := max(8, (len(secret)+1)/2); n < len(secret); n++ {
		out = append(out, secret[:n], secret[len(secret)-n:])
	}
	return out
}

// Find returns every occurrence of every spelling (and raw fragment, see
// Fragments) of every secret in the outputs (name → text), sorted by
// output name. A fragment is reported only where no longer form of the
// secret explains it. Nothing found: nil.
func Find(outputs map[string]string, secrets []string) []Finding {
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	var found []Finding
	for _, name := range names {
		for _, secret := range secrets {
			for _, form := range Spellings(secret) {
				if n := strings.Count(outputs[name], form); n > 0 {
					found = append(found, Finding{Output: name, Secret: secret, Form: form, Count: n})
				}
			}
			// The whole secret removed, what is left of it.
			rest := strings.ReplaceAll(outputs[name], secret, "")
			fragments := Fragments(secret)
			for i := len(fragments) - 1; i >= 0; i-- { // longest first
				if n := strings.Count(rest, fragments[i]); n > 0 {
					found = append(found, Finding{Output: name, Secret: secret, Form: fragments[i], Count: n})
					rest = strings.ReplaceAll(rest, fragments[i], "")
				}
			}
		}
	}
	return found
}

// Total is the number of occurrences in found.
func Total(found []Finding) int {
	n := 0
	for _, f := range found {
		n += f.Count
	}
	return n
}

// PerOutput sums the occurrences of found by output name.
func PerOutput(found []Finding) map[string]int {
	m := map[string]int{}
	for _, f := range found {
		m[f.Output] += f.Count
	}
	return m
}
