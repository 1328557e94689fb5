package backtest

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/store"
)

// forecaster runs the walk-forward refits of one trace.
type forecaster struct {
	cfg      Config
	ctl      *control.Controller // configuration only: Forecast is pure
	trace    Trace
	buckets  []float64 // demand per forecast step, aggregated
	perStep  int       // trace steps per forecast step
	perRefit int       // forecast steps per refit
}

func newForecaster(cfg Config, t Trace) (*forecaster, error) {
	f := &forecaster{cfg: cfg, trace: t}
	fo := cfg.Forecast
	f.perStep = int(fo.Step / t.Step)
	f.perRefit = int(fo.RefitEvery / fo.Step)
	nb := (len(t.RPS) + f.perStep - 1) / f.perStep
	f.buckets = make([]float64, nb)
	for b := range f.buckets {
		v, seen := 0.0, 0
		for _, x := range t.RPS[b*f.perStep : min((b+1)*f.perStep, len(t.RPS))] {
			if math.IsNaN(x) {
				continue
			}
			if fo.Aggregate == string(store.Mean) {
				v += x
			} else {
				v = math.Max(v, x)
			}
			seen++
		}
		switch {
		case seen == 0:
			v = math.NaN()
		case fo.Aggregate == string(store.Mean):
			v /= float64(seen)
		}
		f.buckets[b] = v
	}
	ctl, err := control.New(cfg.Planner, fo.Settings)
	if err != nil {
		return nil, err
	}
	f.ctl = ctl
	return f, nil
}

// start computes every refit's forecasts and plans in the background,
// each from only the buckets before its own time, and returns at once.
// The hybrid policy adopts them in time order, which gates them
// (control.Controller.Adopt). They run in parallel, the earliest first;
// with the daily model choice, the days do, and within a day the refits
// run in order, each re-running the model its predecessor chose
// (control.Controller.ForecastReusing), as a pool does in serve.
func (f *forecaster) start(ctx context.Context) *refitStream {
	n := (len(f.buckets) + f.perRefit - 1) / f.perRefit
	s := &refitStream{refits: make([]control.Refit, n), made: make([]chan struct{}, n), done: make(chan struct{})}
	for j := range s.made {
		s.made[j] = make(chan struct{})
	}
	days := f.days(n)
	progress := f.cfg.progress(StageRefits)
	var count atomic.Int64
	go func() {
		defer close(s.done)
		s.err = forEach(ctx, len(days), func(d int) error {
			var prev control.Selection
			for j := days[d][0]; j < days[d][1]; j++ {
				var err error
				if s.refits[j], err = f.refitAt(j, prev); err != nil {
					return err
				}
				close(s.made[j])
				prev = s.refits[j].Selection()
				if progress != nil {
					progress(int(count.Add(1)), n)
				}
			}
			return nil
		})
	}()
	return s
}

// refitStream is a trace's walk-forward refits while they are made in
// the background: the replays that read them run meanwhile, each waiting
// only for the refit it needs next, so that the refits and the replays
// share the cores rather than every replay waiting for the last refit.
type refitStream struct {
	refits []control.Refit
	made   []chan struct{} // made[j] is closed once refits[j] is made
	done   chan struct{}   // closed once the making ended
	err    error           // why it ended early; read after done
}

// get returns refit j once it is made; false when the making ended
// without it (wait tells why).
func (s *refitStream) get(j int) (control.Refit, bool) {
	select {
	case <-s.made[j]:
		return s.refits[j], true
	case <-s.done:
		select {
		case <-s.made[j]:
			return s.refits[j], true
		default:
			return control.Refit{}, false
		}
	}
}

// wait waits until every refit is made, or the making ended early, and
// returns why it did.
func (s *refitStream) wait() error {
	<-s.done
	return s.err
}

// days splits the n refits into runs of the same control.SelectionDay,
// [first, end): one refit a run when every refit chooses its model, so
// all of them run in parallel.
func (f *forecaster) days(n int) [][2]int {
	var out [][2]int
	daily := f.cfg.Forecast.ChooseModelDaily
	for j := 0; j < n; j++ {
		if len(out) == 0 || !daily || !control.SelectionDay(f.refitTime(j)).Equal(control.SelectionDay(f.refitTime(j-1))) {
			out = append(out, [2]int{j, j})
		}
		out[len(out)-1][1] = j + 1
	}
	return out
}

// refitTime is when refit j is made.
func (f *forecaster) refitTime(j int) time.Time {
	return f.trace.Start.Add(time.Duration(j*f.perRefit) * f.cfg.Forecast.Step)
}

// history returns what refit j sees: the buckets of the History window
// before bucket j·perRefit, nothing later.
func (f *forecaster) history(j int) []float64 {
	k := j * f.perRefit
	window := int(f.cfg.Forecast.History / f.cfg.Forecast.Step)
	return f.buckets[max(0, k-window):k]
}

// refitAt forecasts from refit j's point of view, re-running prev, the
// model the refit before it chose, when that may be reused.
func (f *forecaster) refitAt(j int, prev control.Selection) (control.Refit, error) {
	r, err := f.ctl.ForecastReusing(f.refitTime(j), f.history(j), prev)
	if errors.Is(err, control.ErrNoHistory) {
		return r, nil
	}
	return r, err
}
