package cli

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// envMode makes the test binary act as a tiny program built on this
// package (see TestMain), so the exit statuses are those of a real process.
const envMode = "PREWARM_TEST_CLI_MODE"

// TestMain runs, under envMode, a main shaped like the binaries': Guard
// around the command, Report for internal errors, ExitUsage and
// ExitFailure for the others.
func TestMain(m *testing.M) {
	mode := os.Getenv(envMode)
	if mode == "" {
		os.Exit(m.Run())
	}
	args, debug := StripDebug(os.Args[1:], os.Getenv)
	err := Guard(func() error {
		switch mode {
		case "panic":
			var pools []string
			_ = pools[len(args)+5] // index out of range, as 'plan --history -5h' did
		case "usage":
			return errUsage
		case "fail":
			return errors.New("the store refused")
		}
		return nil
	})
	if code, ok := Report(os.Stderr, "prog", err, debug); ok {
		os.Exit(code)
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "prog:", err)
		os.Exit(ExitUsage)
	case err != nil:
		fmt.Fprintln(os.Stderr, "prog:", err)
		os.Exit(ExitFailure)
	}
}

var errUsage = errors.New("--x is required")

// A panic exits 1 with a line starting
// "internal error:" and a stack only under --debug or PREWARM_DEBUG=1;
// usage errors keep 2, failures 1, success 0.
func TestExitStatuses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mode      string
		args, env []string
		code      int
		first     string
		stack     bool
	}{
		{"panic", nil, nil, ExitInternal, "internal error: prog: runtime error: index out of range [5] with length 0", false},
		{"panic", []string{"--debug"}, nil, ExitInternal, "internal error: prog: runtime error: index out of range [5] with length 0", true},
		{"panic", []string{"a"}, []string{EnvDebug + "=1"}, ExitInternal, "internal error: prog: runtime error: index out of range [6] with length 0", true},
		{"usage", []string{"--debug"}, nil, ExitUsage, "prog: --x is required", false},
		{"fail", nil, nil, ExitFailure, "prog: the store refused", false},
		{"ok", nil, nil, ExitOK, "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v %v", tt.mode, tt.args, tt.env), func(t *testing.T) {
			cmd := exec.Command(exe, tt.args...)
			cmd.Env = append(os.Environ(), append([]string{envMode + "=" + tt.mode}, tt.env...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			out := stderr.String()
			first, _, _ := strings.Cut(out, "\n")
			if got := cmd.ProcessState.ExitCode(); got != tt.code || first != tt.first {
				t.Errorf("exit %d, first line %q; want %d, %q\n%s", got, first, tt.code, tt.first, out)
			}
			if hasStack := strings.Contains(out, "goroutine ") && strings.Contains(out, "cli_test.go:"); hasStack != tt.stack {
				t.Errorf("stack printed: %v, want %v:\n%s", hasStack, tt.stack, out)
			}
			if strings.Contains(out, "panic:") {
				t.Errorf("Go's own panic report reached stderr:\n%s", out)
			}
		})
	}
}

func TestStripDebug(t *testing.T) {
	for _, tt := range []struct {
		args, want []string
		env        string
		debug      bool
	}{
		{[]string{"plan", "--debug", "--input", "x"}, []string{"plan", "--input", "x"}, "", true},
		{[]string{"--debug", "serve"}, []string{"serve"}, "", true},
		{[]string{"release", "--", "--debug"}, []string{"release", "--", "--debug"}, "", false},
		{[]string{"fit"}, []string{"fit"}, "1", true},
		{[]string{"fit"}, []string{"fit"}, "0", false},
		{nil, []string{}, "", false},
	} {
		got, debug := StripDebug(tt.args, func(string) string { return tt.env })
		if !slices.Equal(got, tt.want) || debug != tt.debug {
			t.Errorf("StripDebug(%q, env %q) = %q, %v; want %q, %v", tt.args, tt.env, got, debug, tt.want, tt.debug)
		}
	}
}

// --log-level takes the four level names in any case and refuses the
// rest (slog's own "INFO+2" offsets included), naming the levels.
func TestLogLevelFlag(t *testing.T) {
	cases := []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"debug", slog.LevelDebug, true}, {"INFO", slog.LevelInfo, true}, {"Warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true}, {"warning", 0, false}, {"INFO+2", 0, false}, {"", 0, false},
	}
	for _, tc := range cases {
		var f LogLevelFlag
		err := f.Set(tc.in)
		switch {
		case tc.ok && (err != nil || f.Level != tc.want):
			t.Errorf("Set(%q) = %v, level %v; want %v", tc.in, err, f.Level, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "debug, info, warn, error")):
			t.Errorf("Set(%q) = %v; want an error listing the levels", tc.in, err)
		}
	}
	f := LogLevelFlag{Level: slog.LevelWarn}
	if f.String() != "warn" {
		t.Errorf("String() = %q, want warn", f.String())
	}
}
