package ui

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
)

//go:embed index.html
var page []byte

// Handler serves the status page.
func Handler() http.Handler {
	csp := policy(page)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		w.Write(page)
	})
}

// policy is the page's Content-Security-Policy: nothing may load but the
// API on the same origin; the inline script runs because its hash matches,
// the inline style because styles are inline.
func policy(html []byte) string {
	csp := "default-src 'none'; connect-src 'self'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	if script, ok := inlineScript(html); ok {
		sum := sha256.Sum256(script)
		csp += "; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return csp
}

// inlineScript returns the text of the page's one <script> element.
func inlineScript(html []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(html, []byte("<script>"))
	if !ok {
		return nil, false
	}
	script, _, ok := bytes.Cut(rest, []byte("</script>"))
	return script, ok
}
