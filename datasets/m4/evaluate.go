package m4

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
)

// EvalOptions says how Evaluate scores a method. The zero value scores M4
// Hourly: horizon 48, period 24, 95% intervals, GOMAXPROCS workers.
type EvalOptions struct {
	// Horizon is the number of steps forecast; 0 means each series'
	// test length.
	Horizon int
	// Period is the seasonal lag of the MASE and MSIS scale; 0 means 24.
	Period int
	// Level is the interval's coverage; 0 means 0.95.
	Level float64
	// Workers is how many series are forecast at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called (from any goroutine) after each series.
	Progress func()
}

// EvalResult is one method's score on a set of series.
type EvalResult struct {
	// Scores are the means over the series.
	Scores accuracy.Scores
	// Series is how many series were scored.
	Series int
	// Fallbacks counts forecasts that fell back to a simpler method.
	Fallbacks int
	// Elapsed is the wall-clock time of the whole evaluation.
	Elapsed time.Duration
}

// Evaluate forecasts every series' test period from its training history
// with f, in parallel, and averages the scores. It stops early, returning
// ctx's error, when ctx is cancelled. A forecaster error or a forecast of
// the wrong length fails the evaluation, naming the series.
//
// Only Series.Train reaches f, as a copy: a forecaster never sees a test
// value and cannot change the history the scale is computed from.
func Evaluate(ctx context.Context, f model.Forecaster, series []Series, opt EvalOptions) (EvalResult, error) {
	if len(series) == 0 {
		return EvalResult{}, errors.New("evaluate: no series to score")
	}
	if opt.Period == 0 {
		opt.Period = HourlyPeriod
	}
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	scores := make([]accuracy.Scores, len(series))
	fellBack := make([]bool, len(series))
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(series) {
					return
				}
				sc, fb, err := evaluateOne(f, series[i], opt)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				scores[i], fellBack[i] = sc, fb
				if opt.Progress != nil {
					opt.Progress()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return EvalResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return EvalResult{}, err
	}
	var sum accuracy.Summary
	res := EvalResult{Series: len(series)}
	for i, sc := range scores {
		sum.Add(sc)
		if fellBack[i] {
			res.Fallbacks++
		}
	}
	res.Scores = sum.Mean()
	res.Elapsed = time.Since(start)
	return res, nil
}

func evaluateOne(f model.Forecaster, s Series, opt EvalOptions) (accuracy.Scores, bool, error) {
	h := opt.Horizon
	if h == 0 || h > len(s.Test) {
		h = len(s.Test)
	}
	fc, err := f.Forecast(slices.Clone(s.Train), h, opt.Level)
	if err != nil {
		return accuracy.Scores{}, false, fmt.Errorf("series %s: %w", s.ID, err)
	}
	if len(fc.Mean) != h || len(fc.Lower) != h || len(fc.Upper) != h {
		return accuracy.Scores{}, false, fmt.Errorf("series %s: forecast has %d/%d/%d steps, want %d",
			s.ID, len(fc.Mean), len(fc.Lower), len(fc.Upper), h)
	}
	sc, err := accuracy.Score(s.Train, s.Test[:h], fc.Mean, fc.Lower, fc.Upper, opt.Period, opt.Level)
	if err != nil {
		return accuracy.Scores{}, false, fmt.Errorf("series %s: %w", s.ID, err)
	}
	return sc, fc.Fallback != "", nil
}
