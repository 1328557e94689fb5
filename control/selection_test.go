package control

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
)

// choosing counts its searches (Select) and the forecasts of the choices
// it handed back.
type choosing struct {
	searches, reruns *atomic.Int64
	rate             float64
}

func (c choosing) Forecast(h []float64, n int, level float64) (model.Forecast, error) {
	fc, _, err := c.Select(h, n, level)
	return fc, err
}

func (c choosing) Select(_ []float64, n int, level float64) (model.Forecast, model.Forecaster, error) {
	c.searches.Add(1)
	fc, _ := constant(c.rate).Forecast(nil, n, level)
	return fc, rerun(c), nil
}

// rerun is a choice handed back by choosing.
type rerun choosing

func (r rerun) Forecast(_ []float64, n int, level float64) (model.Forecast, error) {
	r.reruns.Add(1)
	return constant(2*r.rate).Forecast(nil, n, level)
}

// With the daily choice, a refit re-runs the model an earlier refit chose
// that UTC day for the same seasonal periods, and chooses again on a new
// day, for other periods, or with nothing chosen before; Refit keeps the
// choice itself. Without it, every refit chooses.
func TestForecastReusingChoosesOnceADay(t *testing.T) {
	var searches, reruns atomic.Int64
	settings := hourly(func([]int) model.Forecaster { return choosing{&searches, &reruns, 100} })
	settings.ChooseModelDaily = true
	c, err := New(testPlanner(), settings)
	if err != nil {
		t.Fatal(err)
	}
	history := flat(72, 100)
	morning := t0.Add(6 * time.Hour)
	chosen, err := c.Forecast(morning, history)
	if err != nil {
		t.Fatal(err)
	}
	otherPeriods := chosen.Selection()
	otherPeriods.periods = []int{12}
	tests := []struct {
		name         string
		at           time.Time
		prev         Selection
		wantReuse    bool
		wantForecast float64
	}{
		{"later the same day: re-run", morning.Add(17 * time.Hour), chosen.Selection(), true, 200},
		{"the next day: choose again", morning.Add(18 * time.Hour), chosen.Selection(), false, 100},
		{"nothing chosen before: choose", morning.Add(time.Hour), Selection{}, false, 100},
		{"chosen for other periods: choose again", morning.Add(time.Hour), otherPeriods, false, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s0, r0 := searches.Load(), reruns.Load()
			r, err := c.ForecastReusing(tt.at, history, tt.prev)
			if err != nil {
				t.Fatal(err)
			}
			reused := reruns.Load() == r0+1 && searches.Load() == s0
			if reused != tt.wantReuse {
				t.Errorf("re-ran the choice: %v, want %v (searches +%d, re-runs +%d)", reused, tt.wantReuse, searches.Load()-s0, reruns.Load()-r0)
			}
			if got := r.Forecast.Forecast.Mean[0]; got != tt.wantForecast {
				t.Errorf("forecast %v, want %v", got, tt.wantForecast)
			}
			if r.Selection().model == nil || !r.Selection().day.Equal(SelectionDay(tt.at)) {
				t.Errorf("the refit carries no choice for its day: %+v", r.Selection())
			}
		})
	}
	t.Run("Refit keeps its own choice", func(t *testing.T) {
		s0, r0 := searches.Load(), reruns.Load()
		for h := range 3 {
			if _, err := c.Refit(t0.Add(time.Duration(30+h)*time.Hour), history); err != nil {
				t.Fatal(err)
			}
		}
		if searches.Load()-s0 != 1 || reruns.Load()-r0 != 2 {
			t.Errorf("three refits on one day: %d searches and %d re-runs, want 1 and 2", searches.Load()-s0, reruns.Load()-r0)
		}
	})
	t.Run("a model that cannot choose forecasts afresh", func(t *testing.T) {
		s := hourly(func([]int) model.Forecaster { return constant(100) })
		s.ChooseModelDaily = true
		plain, err := New(testPlanner(), s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := plain.Forecast(morning, history)
		if err != nil {
			t.Fatal(err)
		}
		if r.Selection().model != nil {
			t.Errorf("a plain model left a choice: %+v", r.Selection())
		}
	})
	t.Run("off, every refit chooses", func(t *testing.T) {
		every, err := New(testPlanner(), hourly(func([]int) model.Forecaster { return choosing{&searches, &reruns, 100} }))
		if err != nil {
			t.Fatal(err)
		}
		s0, r0 := searches.Load(), reruns.Load()
		for h := range 3 {
			if _, err := every.Refit(t0.Add(time.Duration(30+h)*time.Hour), history); err != nil {
				t.Fatal(err)
			}
		}
		if searches.Load()-s0 != 3 || reruns.Load() != r0 {
			t.Errorf("three refits on one day: %d searches and %d re-runs, want 3 and 0", searches.Load()-s0, reruns.Load()-r0)
		}
	})
}
