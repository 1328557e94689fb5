package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// Every command and eval mode has an example on its --help screen, and
// every example parses: its flags exist and their values are valid, so
// the command line appended with --help prints the help and exits 0.
func TestHelpExamplesParse(t *testing.T) {
	names := []string{"eval m4", "eval traces", "eval policy"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	for name := range examples {
		if !slices.Contains(names, name) {
			t.Errorf("examples for %q, which is no command", name)
		}
	}
	for _, name := range names {
		ex := examples[name]
		if len(ex) == 0 {
			t.Errorf("forecaster %s --help has no example", name)
		}
		for _, e := range ex {
			t.Run(name+" "+e.args, func(t *testing.T) {
				args := append(strings.Fields(name), shellWords(t, e.args)...)
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), append(args, "--help"), &stdout, &stderr)
				if code != 0 || !strings.Contains(stderr.String(), strings.TrimSpace("forecaster "+name+" "+e.args)) {
					t.Errorf("forecaster %s --help: exit %d, want 0 and the example shown:\n%s", strings.Join(args, " "), code, stderr.String())
				}
			})
		}
	}
}

// Every command prints the build's version with --version and exits 0,
// as the binary itself does.
func TestEveryCommandHasVersion(t *testing.T) {
	names := []string{"eval m4", "eval traces", "eval policy"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	for _, name := range names {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(strings.Fields(name), "--version"), &stdout, &stderr)
		if code != 0 || !strings.HasPrefix(stdout.String(), "forecaster ") {
			t.Errorf("forecaster %s --version: exit %d, stdout %q, stderr %q", name, code, stdout.String(), stderr.String())
		}
	}
}

// shellWords splits s at spaces outside single quotes, as a shell would
// the examples.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case r == ' ' && !quoted:
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
