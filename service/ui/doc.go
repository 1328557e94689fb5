// Package ui is the status page of 'forecaster serve', served at /: one
// self-contained HTML file (index.html, embedded with go:embed) whose
// script draws every chart as inline SVG from the service's JSON API on the
// same origin, and refreshes itself. It loads nothing else: no fonts, no
// scripts, no images from anywhere, which its Content-Security-Policy
// enforces (connect-src 'self', the script allowed by its hash only).
package ui
