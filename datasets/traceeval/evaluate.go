package traceeval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Method is a forecaster to score; New builds it for a window (which
// carries the step, so a method can work out the clock's periods).
type Method struct {
	Name string
	New  func(w Window) model.Forecaster
}

// Baseline is the name of the seasonal naive method every ratio is
// relative to.
const Baseline = "snaive"

// BaselineMethod is seasonal naive at the window's Period (naive when it
// is 1).
func BaselineMethod() Method {
	return Method{Name: Baseline, New: func(w Window) model.Forecaster {
		if w.Period < 2 {
			return seasonal.Naive{}
		}
		return seasonal.SeasonalNaive{Period: w.Period}
	}}
}

// Score is one method's forecast of one window, scored.
type Score struct {
	Series string
	Origin int
	Half   int
	Method string
	// MAE is the mean absolute error over the scored test steps; Scale
	// the in-sample mean absolute difference at the window's Period
	// (MASE = MAE/Scale).
	MAE, Scale float64
	// Cov80 and Cov95 are the shares of scored steps inside the 80% and
	// 95% intervals; IS95 the mean interval score of the 95% interval
	// (MSIS = IS95/Scale).
	Cov80, Cov95, IS95 float64
	// Seconds is the wall time of the 95% forecast (fit included).
	Seconds float64
	// Fallback is the forecaster's note when it fell back.
	Fallback string
}

// Options tunes Evaluate.
type Options struct {
	// Workers is how many windows are forecast at once; 0 means
	// GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each window (from any
	// goroutine).
	Progress func()
}

// Evaluate forecasts every window with every method (the baseline is
// added when missing) and scores the forecasts. Only the window's Train
// reaches a forecaster, as a copy.
func Evaluate(ctx context.Context, windows []Window, methods []Method, opt Options) ([]Score, error) {
	hasBaseline := false
	for _, m := range methods {
		hasBaseline = hasBaseline || m.Name == Baseline
	}
	if !hasBaseline {
		methods = append([]Method{BaselineMethod()}, methods...)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Score, len(windows)*len(methods))
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(windows) {
					return
				}
				for j, m := range methods {
					sc, err := scoreOne(windows[i], m)
					if err != nil {
						once.Do(func() { firstErr = err; cancel() })
						return
					}
					out[i*len(methods)+j] = sc
				}
				if opt.Progress != nil {
					opt.Progress()
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func scoreOne(w Window, m Method) (Score, error) {
	f := m.New(w)
	h := len(w.Test)
	start := time.Now()
	fc95, err := f.Forecast(append([]float64(nil), w.Train...), h, 0.95)
	elapsed := time.Since(start)
	if err != nil {
		return Score{}, fmt.Errorf("%s at origin %d, method %s: %w", w.Series, w.Origin, m.Name, err)
	}
	fc80, err := f.Forecast(append([]float64(nil), w.Train...), h, 0.80)
	if err != nil {
		return Score{}, fmt.Errorf("%s at origin %d, method %s: %w", w.Series, w.Origin, m.Name, err)
	}
	for _, fc := range []model.Forecast{fc95, fc80} {
		if len(fc.Mean) != h || len(fc.Lower) != h || len(fc.Upper) != h {
			return Score{}, fmt.Errorf("%s at origin %d, method %s: forecast has %d steps, want %d", w.Series, w.Origin, m.Name, len(fc.Mean), h)
		}
	}
	sc := ScoreForecast(w, fc95.Mean, fc80.Lower, fc80.Upper, fc95.Lower, fc95.Upper)
	sc.Method, sc.Seconds, sc.Fallback = m.Name, elapsed.Seconds(), fc95.Fallback
	return sc, nil
}

// ScoreForecast scores a point forecast with its 80% and 95% intervals on
// w's test steps that were recorded.
func ScoreForecast(w Window, mean, lo80, hi80, lo95, hi95 []float64) Score {
	sc := Score{Series: w.Series, Origin: w.Origin, Half: w.Half, Scale: scale(w.Train, w.Period)}
	const alpha = 0.05
	n := 0.0
	for j, y := range w.Test {
		if math.IsNaN(y) {
			continue
		}
		n++
		sc.MAE += math.Abs(y - mean[j])
		if y >= lo80[j] && y <= hi80[j] {
			sc.Cov80++
		}
		if y >= lo95[j] && y <= hi95[j] {
			sc.Cov95++
		}
		is := hi95[j] - lo95[j]
		if y < lo95[j] {
			is += 2 / alpha * (lo95[j] - y)
		}
		if y > hi95[j] {
			is += 2 / alpha * (y - hi95[j])
		}
		sc.IS95 += is
	}
	if n > 0 {
		sc.MAE /= n
		sc.Cov80 /= n
		sc.Cov95 /= n
		sc.IS95 /= n
	}
	for _, v := range []float64{sc.MAE, sc.IS95} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			sc.MAE, sc.IS95 = math.Inf(1), math.Inf(1)
		}
	}
	return sc
}

// scale is the mean absolute difference of x at lag m (MASE's scale),
// floored so that a flat history cannot divide by zero.
func scale(x []float64, m int) float64 {
	s, abs := 0.0, 0.0
	for t := m; t < len(x); t++ {
		s += math.Abs(x[t] - x[t-m])
	}
	for _, v := range x {
		abs += math.Abs(v)
	}
	floor := 1e-9 * (abs/float64(max(len(x), 1)) + 1e-9)
	return math.Max(s/float64(max(len(x)-m, 1)), floor)
}

// Summary is one method's scores on one trace (or, with Series "", the
// geometric mean of the ratios over the traces and the means of the
// rest).
type Summary struct {
	Series, Method string
	// Windows is how many origins were scored.
	Windows int
	// MASE is the mean over the origins of MAE/Scale; Ratio that over the
	// baseline's on the same origins.
	MASE, Ratio float64
	// Cov80, Cov95 and MSIS are means over the origins.
	Cov80, Cov95, MSIS float64
	// Seconds is the mean time per fit.
	Seconds float64
	// Fallbacks counts forecasts that fell back.
	Fallbacks int
}

// Summarise reduces scores to one Summary per trace and method, in the
// order the traces and methods first appear, keeping the scores for
// which keep returns true (nil keeps all). Methods missing some of a
// trace's windows (R's, where a model could not be fitted) are scored on
// the windows they have, against the baseline on the same windows.
func Summarise(scores []Score, keep func(Score) bool) []Summary {
	type key struct{ series, method string }
	type wkey struct {
		series string
		origin int
	}
	baseline := map[wkey]Score{}
	for _, s := range scores {
		if s.Method == Baseline {
			baseline[wkey{s.Series, s.Origin}] = s
		}
	}
	var order []key
	acc := map[key]*struct {
		sum   Summary
		baseM float64
	}{}
	for _, s := range scores {
		if keep != nil && !keep(s) {
			continue
		}
		b, ok := baseline[wkey{s.Series, s.Origin}]
		if !ok {
			continue
		}
		k := key{s.Series, s.Method}
		a := acc[k]
		if a == nil {
			a = &struct {
				sum   Summary
				baseM float64
			}{sum: Summary{Series: s.Series, Method: s.Method}}
			acc[k] = a
			order = append(order, k)
		}
		a.sum.Windows++
		a.sum.MASE += s.MAE / s.Scale
		a.baseM += b.MAE / b.Scale
		a.sum.Cov80 += s.Cov80
		a.sum.Cov95 += s.Cov95
		a.sum.MSIS += s.IS95 / s.Scale
		a.sum.Seconds += s.Seconds
		if s.Fallback != "" {
			a.sum.Fallbacks++
		}
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		a := acc[k]
		s := a.sum
		n := float64(s.Windows)
		s.Ratio = s.MASE / a.baseM
		s.divide(n)
		out = append(out, s)
	}
	return out
}

// Overall returns, per method, the geometric mean of the per-trace
// ratios and the plain means of the other figures over the traces, in
// the order the methods first appear. A method with a trace missing is
// given over the traces it has, and Windows counts its traces.
func Overall(per []Summary) []Summary {
	var methods []string
	acc := map[string]*Summary{}
	logs := map[string]float64{}
	for _, s := range per {
		a := acc[s.Method]
		if a == nil {
			a = &Summary{Method: s.Method}
			acc[s.Method] = a
			methods = append(methods, s.Method)
		}
		a.Windows++
		logs[s.Method] += math.Log(s.Ratio)
		a.MASE += s.MASE
		a.Cov80 += s.Cov80
		a.Cov95 += s.Cov95
		a.MSIS += s.MSIS
		a.Seconds += s.Seconds
		a.Fallbacks += s.Fallbacks
	}
	out := make([]Summary, 0, len(methods))
	for _, m := range methods {
		a := *acc[m]
		n := float64(a.Windows)
		a.Ratio = math.Exp(logs[m] / n)
		a.divide(n)
		out = append(out, a)
	}
	return out
}

// divide turns the summed figures (MASE, coverage, MSIS, seconds) into
// means over n.
func (s *Summary) divide(n float64) {
	s.MASE /= n
	s.Cov80 /= n
	s.Cov95 /= n
	s.MSIS /= n
	s.Seconds /= n
}

// SortSeries orders summaries by trace, then method, stably.
func SortSeries(s []Summary, traceOrder []string) {
	rank := map[string]int{}
	for i, id := range traceOrder {
		rank[id] = i
	}
	sort.SliceStable(s, func(a, b int) bool { return rank[s[a].Series] < rank[s[b].Series] })
}
