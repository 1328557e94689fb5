package redact

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask replaces every spelling of a secret.
const Mask = "[REDACTED]"

// MinSecretLen is the shortest value treated as a secret: shorter values
// would redact ordinary words, and real tokens and keys are far longer.
const MinSecretLen = 6

// Redactor replaces known secrets in text. The zero value redacts nothing;
// a nil *Redactor is valid and redacts nothing. It is safe for concurrent
// use.
type Redactor struct {
	mu       sync.RWMutex
	spelling []string // every form of every secret, longest first
}

// New returns a Redactor for secrets; empty and short values are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes r redact more secrets (e.g. a token read from a file after
// start). Empty and short values are ignored.
func (r *Redactor) Add(secrets ...string) {
	var forms []string
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		forms = append(forms, spellings(s)...)
	}
	if len(forms) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms {
		if !slices.Contains(r.spelling, f) {
			r.spelling = append(r.spelling, f)
		}
	}
	// Longest first, so a form is never partly replaced by a shorter one.
	slices.SortStableFunc(r.spelling, func(a, b string) int { return len(b) - len(a) })
}

// spellings returns s as it may appear in output: raw, URL-escaped, and
// base64 at each of the three byte alignments in each alphabet. For an
// alignment the characters that also depend on neighbouring bytes are cut
// off, so the form matches inside any longer base64 text that contains s.
func spellings(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(s)))
		for pad := range 3 {
			b := enc.Strict().WithPadding(base64.NoPadding).EncodeToString(append(make([]byte, pad), s...))
			// Drop the characters that carry the pad bytes, and the last
			// one, which depends on what follows s.
			lead := (pad*8 + 5) / 6
			if len(b)-1 > lead+4 {
				forms = append(forms, b[lead:len(b)-1])
			}
		}
	}
	var out []string
	for _, f := range forms {
		if len(f) >= MinSecretLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, f := range r.spelling {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, Mask)
		}
	}
	return s
}

// Bytes returns b with every secret replaced by Mask (b itself when it holds
// none).
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, f := range r.spelling {
		if bytes.Contains(b, []byte(f)) {
			b = bytes.ReplaceAll(b, []byte(f), []byte(Mask))
		}
	}
	return b
}

// Error returns err unchanged when its message holds no secret, otherwise
// an error with the redacted message that still unwraps to err, so
// errors.Is and errors.As keep working.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil {
		return err
	}
	msg := err.Error()
	if clean := r.String(msg); clean != msg {
		return &redactedError{msg: clean, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer returns a writer that redacts each Write before passing it to w.
// Log handlers write one record per Write, so a secret inside a record is
// always seen whole.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Snippet returns s with every secret masked, then on one line (control
// characters become spaces) and cut to at most maxBytes at a character
// boundary, "..." marking the cut. Use it for an upstream's text quoted in
// an error: shortening before redacting could cut a secret in half,
// leaving a piece that no redactor recognises.
func (r *Redactor) Snippet(s string, maxBytes int) string {
	s = strings.Map(func(c rune) rune {
		if c < ' ' || c == 0x7f || c == utf8.RuneError {
			return ' '
		}
		return c
	}, r.String(s))
	if len(s) <= maxBytes {
		return s
	}
	cut := max(maxBytes, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
