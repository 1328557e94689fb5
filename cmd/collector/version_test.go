package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A release build's version, set with -ldflags -X on internal/buildinfo,
// is what --version prints, alone or after other flags, the way the
// forecaster prints it.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the collector; skipped with -short")
	}
	const version = "v9.8.7-ldflags-test"
	bin := filepath.Join(t.TempDir(), "collector")
	build := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-X github.com/prewarm/prewarm/internal/buildinfo.version="+version, "github.com/prewarm/prewarm/cmd/collector")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"--version"},
		{"--log-level", "debug", "--version"},
		{"--debug", "--version"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if want := "collector " + version + " (revision "; err != nil || !strings.HasPrefix(string(out), want) || strings.Count(string(out), "\n") != 1 {
			t.Errorf("collector %s: %v %q, want one line starting %q", strings.Join(args, " "), err, out, want)
		}
	}
}
