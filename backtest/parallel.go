package backtest

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// task is one unit of work for runTasks; weight orders the tasks, the
// heaviest first, so that the longest do not start last.
type task struct {
	weight int
	do     func() error
}

// runTasks runs the tasks on GOMAXPROCS workers, heaviest first (in
// their order among equals), and returns the first error in the tasks'
// order, or ctx's error. progress (nil: none) is told each task done.
func runTasks(ctx context.Context, tasks []task, progress func(done, total int)) error {
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(tasks[b].weight, tasks[a].weight) })
	errs := make([]error, len(tasks))
	var done atomic.Int64
	err := forEach(ctx, len(order), func(k int) error {
		errs[order[k]] = tasks[order[k]].do()
		if progress != nil {
			progress(int(done.Add(1)), len(tasks))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return firstNonNil(errs)
}

// forEach runs do(0) … do(n−1) on GOMAXPROCS workers and returns the
// first error in index order, or ctx's error if it ended first (then not
// every index has run).
func forEach(ctx context.Context, n int, do func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				errs[i] = do(i)
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstNonNil(errs)
}

func firstNonNil(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
