package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The collector's exit statuses, from a real process: 2 for a usage error
// (--debug, which every binary accepts, changes nothing there), and the
// message on one line without Go's panic report.
func TestExitStatuses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"--debug", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
	} {
		cmd := exec.Command(exe, tt.args...)
		cmd.Env = append(os.Environ(), envRunMain+"=1")
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != tt.code || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "goroutine ") {
			t.Errorf("collector %v: exit %d, want %d with %q:\n%s", tt.args, got, tt.code, tt.want, out)
		}
	}
}
