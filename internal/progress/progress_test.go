package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRender(t *testing.T) {
	tests := []struct {
		done, total int
		want        string
	}{
		{0, 10, "eval [..........]    0/10   0%   1.5s"},
		{5, 10, "eval [#####.....]    5/10  50%   1.5s"},
		{10, 10, "eval [##########]   10/10 100%   1.5s"},
		{12, 10, "eval [##########]   10/10 100%   1.5s"},
		{-1, 10, "eval [..........]    0/10   0%   1.5s"},
	}
	for _, tc := range tests {
		if got := Render("eval", tc.done, tc.total, 1500*time.Millisecond, 10); got != tc.want {
			t.Errorf("Render(%d/%d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
	if got := Render("x", 0, 0, 0, 4); !strings.Contains(got, "0/1") {
		t.Errorf("zero total: %q", got)
	}
}

// A writer that is not a terminal never gets a bar, however long the work.
func TestSilentWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 3, "eval")
	b.Add()
	b.Add()
	b.Done()
	b.Done() // idempotent
	if buf.Len() != 0 {
		t.Errorf("wrote %q to a non-terminal", buf.String())
	}
	if got := b.done.Load(); got != 2 {
		t.Errorf("counted %d, want 2", got)
	}
}
