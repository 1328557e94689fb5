package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A runtime panic exits 1 with a line starting "internal error:" and the
// stack only under --debug, never 2 (usage errors). 'plan --history -5h'
// must be a usage error (2) naming the flag, without a panic; should it
// panic, the panic must come out as an internal error.
func TestPanicIsAnInternalError(t *testing.T) {
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
	if !strings.HasPrefix(plain, "internal error:") {
		// plan refuses the flag: a usage error, no panic.
		if code != 2 || !strings.Contains(plain, "--history") || strings.Contains(plain+debug, "goroutine ") {
			t.Errorf("exit %d, want 2 naming --history without a stack:\n%s", code, plain)
		}
		t.Skipf("plan --history -5h is refused without a panic (exit %d): %s", code, strings.TrimSpace(plain))
	}
	if code != 1 || debugCode != 1 {
		t.Errorf("exit %d, and %d with --debug; want 1", code, debugCode)
	}
	if strings.Contains(plain, "goroutine ") || strings.Contains(plain, "panic(") || !strings.Contains(plain, "--debug") {
		t.Errorf("without --debug: want one line and a hint, no stack:\n%s", plain)
	}
	if !strings.HasPrefix(debug, "internal error: forecaster plan: ") || !strings.Contains(debug, "goroutine ") || !strings.Contains(debug, "plan.go:") {
		t.Errorf("with --debug: want the line and the stack through plan.go:\n%s", debug)
	}
	first, _, _ := strings.Cut(plain, "\n")
	t.Logf("exit %d: %s", code, first)
}
