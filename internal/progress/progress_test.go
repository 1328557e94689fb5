package progress

import (
	"bytes"
	"io"
	"os"
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

// The bar's silence rests on isTerminal: a buffer and a pipe are not
// terminals (the Delay alone would also keep a short test quiet, so the
// check is made directly).
func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "pipe": w, "discard": io.Discard} {
		if isTerminal(out) {
			t.Errorf("%s reported as a terminal", name)
		}
	}
}

// Staged progress is silent off a terminal; on one it always draws a
// stage's last item, throttles the rest, and clears its line at the end.
func TestStages(t *testing.T) {
	if p, clear := Stages(&bytes.Buffer{}); p != nil {
		t.Error("Stages gave a callback for a buffer, want nil")
	} else {
		clear()
	}
	var buf bytes.Buffer
	p, clear := stagesOn(&buf)
	for i := 1; i <= 100; i++ {
		p("refits", i, 100)
	}
	p("replays", 3, 3)
	out := buf.String()
	if n := strings.Count(out, "\r"); n < 2 || n > 4 {
		t.Errorf("drew %d times for 101 calls within a moment, want the first, the stages' last ones and no more:\n%q", n, out)
	}
	for _, want := range []string{"refits [####################]  100/100 100%", "replays [####################]    3/3 100%"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%q", want, out)
		}
	}
	buf.Reset()
	clear()
	if buf.String() != "\r\033[K" {
		t.Errorf("clear wrote %q, want the line erased", buf.String())
	}
}
