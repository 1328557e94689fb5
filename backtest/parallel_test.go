package backtest

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
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
			err := runTasks(context.Background(), tasks)
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
