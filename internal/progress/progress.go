package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Delay is how long work runs before the bar first appears.
const Delay = time.Second

// Bar counts finished items and redraws itself a few times a second.
// Add is safe from many goroutines. The zero value is not usable; call New.
type Bar struct {
	w     io.Writer
	total int
	label string
	done  atomic.Int64
	start time.Time

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// New starts a bar for total items written to w, labelled label. If w is
// not a terminal the bar stays silent.
func New(w io.Writer, total int, label string) *Bar {
	b := &Bar{w: w, total: total, label: label, start: time.Now(), stop: make(chan struct{})}
	if !isTerminal(w) || total <= 0 {
		return b
	}
	b.wg.Add(1)
	go b.loop()
	return b
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add records one more finished item.
func (b *Bar) Add() { b.done.Add(1) }

// Done stops the bar and clears its line if it was drawn.
func (b *Bar) Done() {
	b.once.Do(func() {
		close(b.stop)
		b.wg.Wait()
	})
}

func (b *Bar) loop() {
	defer b.wg.Done()
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	drawn := false
	for {
		select {
		case <-b.stop:
			if drawn {
				fmt.Fprint(b.w, "\r\033[K")
			}
			return
		case <-t.C:
			if time.Since(b.start) < Delay {
				continue
			}
			fmt.Fprint(b.w, "\r"+Render(b.label, int(b.done.Load()), b.total, time.Since(b.start), 30))
			drawn = true
		}
	}
}

// Render formats one bar line, e.g.
//
//	eval auto [#######.......]  207/414  50%  3.1s
func Render(label string, done, total int, elapsed time.Duration, width int) string {
	if total <= 0 {
		total = 1
	}
	done = min(max(done, 0), total)
	filled := done * width / total
	return fmt.Sprintf("%s [%s%s] %4d/%d %3d%% %5.1fs", label, strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), done, total, done*100/total, elapsed.Seconds())
}

// Stages returns a progress callback for work that runs in named stages,
// each counted to its own total (the shape of backtest.Config.Progress),
// and the function that clears its line when the work is done. On a
// terminal it redraws one bar line at most five times a second and always
// on a stage's last item; elsewhere the callback is nil and nothing is
// drawn.
func Stages(w io.Writer) (progress func(stage string, done, total int), clearLine func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	return stagesOn(w)
}

// stagesOn is Stages drawing on w, terminal or not.
func stagesOn(w io.Writer) (progress func(stage string, done, total int), clearLine func()) {
	var mu sync.Mutex
	var last time.Time
	start := time.Now()
	drawn := false
	progress = func(stage string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); done == total || now.Sub(last) >= 200*time.Millisecond {
			last = now
			fmt.Fprintf(w, "\r%s\033[K", Render(stage, done, total, now.Sub(start), 20))
			drawn = true
		}
	}
	clearLine = func() {
		mu.Lock()
		defer mu.Unlock()
		if drawn {
			fmt.Fprint(w, "\r\033[K")
		}
	}
	return progress, clearLine
}
