package backtest

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"
)

// runTasks starts the heaviest tasks first, keeps their order among equal
// weights, runs every task once and returns the first error in the tasks'
// own order, whatever order they ran in.
func TestRunTasksHeaviestFirst(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one worker: the start order is the run order
	errA, errB := errors.New("a"), errors.New("b")
	cases := []struct {
		name      string
		weights   []int
		fail      map[int]error
		wantOrder []int
		wantErr   error
	}{
		{"equal weights keep their order", []int{0, 0, 0}, nil, []int{0, 1, 2}, nil},
		{"heaviest first, stable among equals", []int{0, 3, 1, 3, 2}, nil, []int{1, 3, 4, 2, 0}, nil},
		{"the first error in task order, not run order", []int{0, 5}, map[int]error{0: errA, 1: errB}, []int{1, 0}, errA},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var order []int
			tasks := make([]task, len(tc.weights))
			for i, w := range tc.weights {
				tasks[i] = task{weight: w, do: func() error {
					mu.Lock()
					defer mu.Unlock()
					order = append(order, i)
					return tc.fail[i]
				}}
			}
			err := runTasks(context.Background(), tasks, nil)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if len(order) != len(tc.wantOrder) {
				t.Fatalf("ran %v, want %v", order, tc.wantOrder)
			}
			for i := range order {
				if order[i] != tc.wantOrder[i] {
					t.Fatalf("ran %v, want %v", order, tc.wantOrder)
				}
			}
		})
	}
}

// A run tells its progress: every refit and then every replay, each stage
// ending at its total, and the counts only grow.
func TestRunTellsItsProgress(t *testing.T) {
	tr := Trace{Name: "t", Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Step: time.Hour}
	for i := range 5 * 24 {
		tr.RPS = append(tr.RPS, 20+10*math.Sin(float64(i)*2*math.Pi/24))
	}
	cfg := DefaultConfig()
	cfg.Planner.Fleet.RPSPerInstance = 5
	var mu sync.Mutex
	last := map[string][2]int{}
	cfg.Progress = func(stage string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if prev := last[stage]; done < prev[0] || (prev[1] != 0 && total != prev[1]) {
			t.Errorf("%s: %d/%d after %d/%d", stage, done, total, prev[0], prev[1])
		}
		last[stage] = [2]int{done, total}
	}
	if _, err := Run(context.Background(), tr, cfg, PolicyReactive, PolicyHybrid); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{StageRefits, StageReplays} {
		if p := last[stage]; p[1] == 0 || p[0] != p[1] {
			t.Errorf("%s ended at %d/%d, want it done", stage, p[0], p[1])
		}
	}
	if got := last[StageReplays][1]; got != 4 { // static, oracle, reactive, hybrid
		t.Errorf("%d replays, want 4", got)
	}
}
