package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A negative --history is a usage error (exit 2) naming the flag, with no
// stack, with or without --debug. (How a panic comes out, exit 1 with one
// "internal error:" line and the stack only under --debug, is
// internal/cli's TestExitStatuses, with Guard and Report that main runs.)
func TestNegativeHistoryIsAUsageError(t *testing.T) {
	forecaster, _ := binaries(t)
	csv := filepath.Join(t.TempDir(), "demand.csv")
	var b strings.Builder
	b.WriteString("time,rps\n")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for i := range 14 * 24 {
		fmt.Fprintf(&b, "%s,%d\n", start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), 10+i%24)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"plan", "--input", csv, "--gpu-rps", "5", "--history", "-5h"}
	_, plain, code := runToEnd(t, 30*time.Second, forecaster, nil, args...)
	_, debug, debugCode := runToEnd(t, 30*time.Second, forecaster, nil, append(args, "--debug")...)
	for _, run := range []struct {
		name, out string
		code      int
	}{{"plain", plain, code}, {"--debug", debug, debugCode}} {
		if run.code != 2 || !strings.Contains(run.out, "--history") {
			t.Errorf("%s: exit %d, want 2 naming --history:\n%s", run.name, run.code, run.out)
		}
		if strings.Contains(run.out, "internal error") || strings.Contains(run.out, "goroutine ") {
			t.Errorf("%s: an internal error or a stack:\n%s", run.name, run.out)
		}
	}
	first, _, _ := strings.Cut(plain, "\n")
	t.Logf("exit %d: %s", code, first)
}
