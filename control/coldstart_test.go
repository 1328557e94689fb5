package control

import (
	"cmp"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// daily is steps of a noiseless daily rhythm around level req/s, on the
// 30-minute grid, ending at end: a history the model fits exactly, so
// that its own interval has no width.
func daily(end time.Time, days float64, level float64) []float64 {
	step := 30 * time.Minute
	n := int(days * 48)
	h := make([]float64, n)
	for i := range h {
		ts := end.Add(-time.Duration(n-i) * step)
		hr := float64(ts.Hour()) + float64(ts.Minute())/60
		h[i] = level * (1 - 0.3*math.Cos(2*math.Pi*(hr-3)/24))
	}
	return h
}

// coldPlanner is the service's default planner for 10 req/s an instance.
func coldPlanner() planner.Config {
	p := planner.DefaultConfig()
	p.Fleet.RPSPerInstance = 10
	p.Fleet.MaxInstances = 20
	return p
}

// After an import of a short or long history, the first decision's
// forecast has a band of some width, the pool is sized for at least the
// live demand (no reactive scale-out would be needed on what it asks
// for), whatever the pool had (a dry-run fleet reads 0), and the gate's
// reason and the decision say a cold start is in charge.
func TestColdStartIsSizedForLiveDemand(t *testing.T) {
	tests := []struct {
		name       string
		days       float64
		live       float64
		current    int
		wantGate   string
		wantReason string // in the decision's reason
	}{
		{"an hour of history", 1.0 / 24, 30, 0, planner.GateReactive, "warm-up: the peak so far"},
		{"a day of history", 1, 30, 2, planner.GateProfile, "warm-up: the peak so far"},
		{"two days, demand above the history", 2, 30, 0, planner.GateModel, "cold start: the peak of live demand so far, 30 req/s"},
		{"two weeks, demand above the history", 14, 30, 2, planner.GateModel, "cold start: the peak of live demand so far, 30 req/s"},
		{"two weeks, demand as the history", 14, 10, 1, planner.GateModel, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := coldPlanner()
			c, err := New(p, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Refit(t0, daily(t0, tt.days, 13))
			if err != nil {
				t.Fatal(err)
			}
			if f := r.Forecast.Forecast; !(f.Upper[0]-f.Lower[0] > 0) {
				t.Errorf("band %v–%v around %v: want a width", f.Lower[0], f.Upper[0], f.Mean[0])
			}
			if r.Gate.Level != tt.wantGate || !strings.Contains(r.Gate.Reason, "Cold start: ") {
				t.Errorf("gate %s (%s), want %s saying it is a cold start", r.Gate.Level, r.Gate.Reason, tt.wantGate)
			}
			if !c.ColdStart() {
				t.Error("not a cold start")
			}
			at := t0.Add(time.Minute)
			st := c.Decide(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: tt.live, Utilisation: 1}, tt.current)
			if need := p.InstancesFor(tt.live); st.Desired < need {
				t.Errorf("desired %d (%s), below the %d that %v req/s needs", st.Desired, st.Reason, need, tt.live)
			}
			if util := tt.live / (float64(st.Desired) * p.Fleet.RPSPerInstance); util > p.Reactive.ScaleOutUtilisation {
				t.Errorf("desired %d (%s): utilisation %.0f%%, above the reactive rules' %.0f%%", st.Desired, st.Reason,
					100*util, 100*p.Reactive.ScaleOutUtilisation)
			}
			if !strings.Contains(st.Reason, tt.wantReason) {
				t.Errorf("decision %q, want %q in charge", st.Reason, tt.wantReason)
			}
		})
	}
}

// The cold start after an import ends at the refit that scores the
// model's first forecasts: the gate then has its error, the bands are the
// model's own and the live peak is forgotten.
func TestColdStartEndsOnceTheModelIsScored(t *testing.T) {
	c, err := New(coldPlanner(), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	hist := daily(t0, 14, 13)
	if _, err := c.Refit(t0, hist); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	c.Decide(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: 30, Utilisation: 1}, 0)
	next := t0.Add(3 * time.Hour)
	r, err := c.Refit(next, daily(next, 14, 13))
	if err != nil {
		t.Fatal(err)
	}
	if c.ColdStart() || r.Cold || strings.Contains(r.Gate.Reason, "Cold start") || !strings.Contains(r.Gate.Reason, "MAE") {
		t.Errorf("after the first forecasts were scored: cold %v, gate %s (%s); want the measured gate", c.ColdStart(), r.Gate.Level, r.Gate.Reason)
	}
	at = next.Add(time.Minute)
	if st := c.Decide(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: 13, Utilisation: 0.6}, 3); strings.Contains(st.Reason, "cold start") {
		t.Errorf("decision %q still holds the cold start's peak", st.Reason)
	}
}

// A forecast with no interval (a model fitted exactly) gets a band as
// wide as the history's spread (the season-ago differences, or before
// enough of them the observations' distances from their median), the
// recent demand's variation, or a tenth of the forecast on a flat
// history; the refit's own slices are left alone.
func TestColdBand(t *testing.T) {
	zero := func(m float64) model.Forecast {
		return model.Forecast{Mean: []float64{m, m}, Lower: []float64{m, m}, Upper: []float64{m, m}, Level: 0.8}
	}
	tests := []struct {
		name       string
		f          model.Forecast
		history    []float64
		wantHalf   float64
		wantLower0 float64
		season     int // 0: a day of 30-minute steps
	}{
		// Less than a season: the observations' distances from their
		// median (10): 2, 2, 10, 20, whose 0.8 quantile is 14.
		{"varying history", zero(10), []float64{30, 0, 8, 12}, 14, 0, 0},
		// Season-ago differences 20, 20, 10, 10, whose 0.8 quantile is
		// 20, though the last steps are flat.
		{"season-ago differences", zero(10), []float64{5, 25, 25, 5, 15, 15}, 20, 0, 2},
		{"flat history", zero(10), []float64{10, 10, 10}, 1, 9, 0},
		{"never below zero", zero(1), []float64{0, 4, 0, 4}, 1.2816 * math.Sqrt(8), 0, 0},
		{"a wider band is kept", model.Forecast{Mean: []float64{10, 10}, Lower: []float64{2, 2}, Upper: []float64{18, 18}, Level: 0.8},
			[]float64{10, 10}, 8, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]float64(nil), tt.f.Upper...)
			got := coldBand(tt.f, tt.history, cmp.Or(tt.season, 48))
			if half := got.Upper[0] - got.Mean[0]; math.Abs(half-tt.wantHalf) > 1e-3 {
				t.Errorf("upper half-width %v, want %v", half, tt.wantHalf)
			}
			if math.Abs(got.Lower[0]-tt.wantLower0) > 1e-3 {
				t.Errorf("lower %v, want %v", got.Lower[0], tt.wantLower0)
			}
			if tt.f.Upper[0] != before[0] {
				t.Error("the input forecast's slice was changed")
			}
		})
	}
}

// zeroWidth forecasts the value a season earlier with no interval, as a
// seasonal-naive fit on too short a history does.
type zeroWidth struct{ season int }

func (z zeroWidth) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	f := model.Forecast{Method: "snaive(48)", Level: level}
	for h := range horizon {
		v := history[len(history)-z.season+h%z.season]
		f.Mean, f.Lower, f.Upper = append(f.Mean, v), append(f.Lower, v), append(f.Upper, v)
	}
	return f, nil
}

// varying is days of demand on the 30-minute grid whose level moves from
// day to day and hour to hour, ending with six flat hours at 13 req/s.
func varying(days float64) []float64 {
	h := make([]float64, int(days*48))
	for i := range h {
		h[i] = 20 + 15*math.Sin(float64(i)*0.7) + 10*math.Sin(float64(i)/9)
	}
	for i := len(h) - 12; i < len(h); i++ {
		h[i] = 13
	}
	return h
}

// A cold start on a day and a half of varying history: the band of a
// forecast that has none is as wide as the history's season-ago
// differences (it holds 80% of how far the same time a day earlier
// missed), and the cold-start rule is in charge until the model has two
// days; with two weeks, once its first forecasts are scored, the model is.
func TestColdStartSaysWhoIsInCharge(t *testing.T) {
	set := Settings{NewModel: func([]int) model.Forecaster { return zeroWidth{48} }}
	c, err := New(coldPlanner(), set)
	if err != nil {
		t.Fatal(err)
	}
	hist := varying(1.5)
	r, err := c.Refit(t0, hist)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []float64
	for i := 48; i < len(hist); i++ {
		diffs = append(diffs, math.Abs(hist[i]-hist[i-48]))
	}
	want := quantileOf(diffs, 0.8)
	f := r.Forecast.Forecast
	covered := 0
	for _, d := range diffs {
		if f.Mean[0]+d <= f.Upper[0] && f.Mean[0]-d >= f.Lower[0]-1e-9 || f.Lower[0] == 0 && f.Mean[0]+d <= f.Upper[0] {
			covered++
		}
	}
	if half := f.Upper[0] - f.Mean[0]; half < want-1e-9 || covered < len(diffs)*3/4 {
		t.Errorf("band %.3g–%.3g around %.3g covers %d of %d season-ago differences; want a half-width of at least %.3g",
			f.Lower[0], f.Upper[0], f.Mean[0], covered, len(diffs), want)
	}
	ch := c.InCharge()
	if ch.Rule != ChargeColdStart || !strings.Contains(ch.Reason, "until the model has 2d of history") || !strings.Contains(ch.Reason, "snaive(48)") {
		t.Errorf("in charge %+v, want the cold start until 2d, naming the guess", ch)
	}

	warm, err := New(coldPlanner(), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Refit(t0, daily(t0, 14, 13)); err != nil {
		t.Fatal(err)
	}
	if got := warm.InCharge(); got.Rule != ChargeColdStart {
		t.Errorf("before the model's forecasts are scored: %+v, want the cold start", got)
	}
	next := t0.Add(3 * time.Hour)
	if _, err := warm.Refit(next, daily(next, 14, 13)); err != nil {
		t.Fatal(err)
	}
	if got := warm.InCharge(); got.Rule != ChargeModel || !strings.Contains(got.Reason, "model's plan") {
		t.Errorf("with the model scored: %+v, want the model in charge", got)
	}
}
