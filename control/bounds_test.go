package control

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// The conformal quantile is the ⌈(n+1)q⌉-th smallest error; beyond the
// sample it grows with an exponential tail of the sample's own spread.
func TestConformalQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	scale := (9 - 5) / math.Log(5) // Q(0.9) − Q(0.5) over ln 5
	cases := []struct{ q, want float64 }{
		{0.5, 5},                       // ⌈5⌉ = 5th
		{0.85, 9},                      // ⌈8.5⌉ = 9th
		{0.9, 9},                       // ⌈9⌉ = 9th
		{0.95, 9 + scale*math.Log(2)},  // (n+1)(1−q) = 0.5
		{0.99, 9 + scale*math.Log(10)}, // 0.1
	}
	for _, c := range cases {
		if got := conformalQuantile(x, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q=%v: %v, want %v", c.q, got, c.want)
		}
	}
	prev := math.Inf(-1)
	for q := 0.5; q < 0.99999; q += 0.0001 {
		v := conformalQuantile(x, q)
		if v < prev {
			t.Fatalf("not monotone at q=%v: %v after %v", q, v, prev)
		}
		prev = v
	}
}

// burstAt10 is hourly demand of 100 req/s with 150 from 10:00 to 11:00.
func burstAt10(from time.Time, hours int) []float64 {
	x := make([]float64, hours)
	for i := range x {
		x[i] = 100
		if from.Add(time.Duration(i)*time.Hour).Hour() == 10 {
			x[i] = 150
		}
	}
	return x
}

// A model that misses a daily burst: the controller's own errors at 10:00
// widen the bound there and nowhere else, so the plan holds the burst's
// need at 10:00 and the mean's at night (per-slot bounds), where a width
// from the model's interval would be the same all day.
func TestPerSlotBoundsFollowTheTimeOfDay(t *testing.T) {
	p := testPlanner()
	p.Bounds.SlotSpread, p.Bounds.MinErrors = -1, 3
	p.Calibration.On, p.ForecastQuantile = false, 0.9
	s := hourly(func([]int) model.Forecaster { return constant(100) })
	s.RefitEvery = time.Hour
	s.Follow = planner.GateModel // seasonal naive knows the burst: the gate would demote the model
	c, err := New(p, s)
	if err != nil {
		t.Fatal(err)
	}
	const days = 8
	start := t0.Add(-days * 24 * time.Hour)
	history := burstAt10(start, days*24)
	history = append(history, burstAt10(t0, 12)...)
	var night, burst planner.Step
	for h := 24; h <= days*24+10; h++ {
		at := start.Add(time.Duration(h) * time.Hour)
		if _, err := c.Refit(at, history[:h]); err != nil {
			t.Fatal(err)
		}
		switch at {
		case t0.Add(3 * time.Hour):
			night, _ = c.PlanStep(at)
		case t0.Add(10 * time.Hour):
			burst, _ = c.PlanStep(at)
		}
	}
	at9 := t0.Add(9 * time.Hour)
	// 10 req/s per instance at 100%: 100 needs 10, the burst 15.
	if night.Desired > 11 || burst.Desired < 15 {
		t.Errorf("plan at 03:00 %d (%s), at 10:00 %d (%s); want about 10 and at least 15",
			night.Desired, night.Reason, burst.Desired, burst.Reason)
	}
	if errs := c.slotErrors(at9.Add(time.Hour), 0); len(errs) < 6 || slices.Max(errs) != 50 {
		t.Errorf("errors at 10:00: %v, want the 50 req/s misses of the last days", errs)
	}
}

// The peak cap: a model forecasting 5 times the recent peak plans for the
// peak's need, not the forecast's.
func TestPeakCapBoundsThePlan(t *testing.T) {
	p := testPlanner()
	p.Bounds.PeakHeadroom = 1.1
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(500) }))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Refit(t0, flat(72, 100))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := c.PlanStep(t0)
	if r.Peak != 100 || st.Desired != 11 || !strings.Contains(st.Reason, "110 req/s") {
		t.Errorf("peak %v, plan %d (%s); want 100 and 11 (110 req/s)", r.Peak, st.Desired, st.Reason)
	}
}

// calibrating is a controller calibrating its quantile from 0.8 at four
// times the default rate (a quick test), with a plan of 100 req/s in
// force, its planner settings, and observe, which feeds it minutes of a
// demand served by ready instances one minute after another.
func calibrating(t *testing.T) (planner.Config, *Controller, func(minutes int, demand float64, ready int)) {
	t.Helper()
	p := testPlanner()
	p.Calibration.On = true
	p.Calibration.Rate = 0.0008
	p.ForecastQuantile = 0.8
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(72, 100)); err != nil {
		t.Fatal(err)
	}
	minute := 0
	return p, c, func(minutes int, demand float64, ready int) {
		for range minutes {
			minute++
			at := t0.Add(time.Duration(minute) * time.Minute)
			c.Observe(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: demand}, ready)
		}
	}
}

// The calibration: intervals whose demand the ready instances could not
// serve within the SLO narrow the quantile's tail; a run without misses
// widens it again; it stays within [MinQuantile, MaxQuantile].
func TestCalibrationFollowsMisses(t *testing.T) {
	p, c, observe := calibrating(t)
	// 11 instances for 100 req/s: no miss. The first boot delay (10m) is
	// not scored: what was ready then is not known.
	observe(40, 100, 11)
	q0 := c.Quantile()
	if q0 >= 0.8 {
		t.Errorf("no misses for 30 minutes: quantile %v, want below its start 0.8", q0)
	}
	// 200 req/s on 11 instances of 10: unstable, every request late.
	observe(30, 200, 11)
	if q := c.Quantile(); q <= 0.99 || q > planner.DefaultMaxQuantile {
		t.Errorf("after 30 missed minutes: quantile %v, want above 0.99 and at most %v", q, planner.DefaultMaxQuantile)
	}
	// The next refit plans at the calibrated quantile.
	r, err := c.Refit(t0.Add(time.Hour), flat(73, 100))
	if err != nil {
		t.Fatal(err)
	}
	if label := fmt.Sprintf("(its %gth percentile)", math.Round(c.Quantile()*1000)/10); r.Quantile != c.Quantile() || !strings.Contains(r.ModelPlan[0].Reason, label) {
		t.Errorf("refit at quantile %v (plan %q), want %v", r.Quantile, r.ModelPlan[0].Reason, c.Quantile())
	}
	// Off: nothing moves.
	p.Calibration.On = false
	off, _ := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
	off.Refit(t0, flat(72, 100))
	off.Observe(t0, planner.Observation{At: t0, Span: time.Minute, DemandRPS: 500}, 1)
	if off.Quantile() != 0.8 {
		t.Errorf("calibration off moved the quantile to %v", off.Quantile())
	}
}

// The calibration's memory runs past the top quantile (Carry): after a
// long lump of misses the quantile stays at the top for longer than after
// a short one, and the state carries the memory across a restart. With
// Carry negative both lumps are forgotten at the clamp alike.
func TestCalibrationCarriesMissesPastTheTop(t *testing.T) {
	// minutesAtTop observes a lump of missed minutes, then misses no more,
	// and counts the minutes the quantile stays at the top; restartAt > 0
	// restores the controller from its State that many minutes after the
	// lump.
	minutesAtTop := func(carry float64, lump, restartAt int) int {
		p := testPlanner()
		p.Calibration.On = true
		p.Calibration.Carry = carry
		p.Calibration.Rate = 0.0008 // four times the default: a quick test
		p.ForecastQuantile = 0.8
		newCtl := func() *Controller {
			c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := newCtl()
		if _, err := c.Refit(t0, flat(72, 100)); err != nil {
			t.Fatal(err)
		}
		minute := 0
		observe := func(demand float64, ready int) {
			minute++
			at := t0.Add(time.Duration(minute) * time.Minute)
			if minute%60 == 0 { // hourly refits keep a plan in force
				if _, err := c.Refit(at, flat(72, 100)); err != nil {
					t.Fatal(err)
				}
			}
			c.Observe(at, planner.Observation{At: at, Span: time.Minute, DemandRPS: demand}, ready)
		}
		for range 15 { // the first boot delay is not scored
			observe(100, 11)
		}
		for range lump {
			observe(200, 11) // every request late
		}
		top := 0
		for k := range 50 * 24 * 60 {
			if k == restartAt && restartAt > 0 {
				c = restart(t, c, newCtl())
			}
			observe(100, 11)
			if c.Quantile() < planner.DefaultMaxQuantile-1e-12 {
				break
			}
			top++
		}
		return top
	}
	// A memory a hundredfold past the top: room for both lumps (the
	// default's tenfold fills up with either).
	const shortLump, longLump, carry = 30, 60, 4.6
	short, long := minutesAtTop(carry, shortLump, 0), minutesAtTop(carry, longLump, 0)
	t.Logf("carry on: %d and %d minutes at the top after %d and %d missed minutes", short, long, shortLump, longLump)
	if !(long > short+longLump-shortLump) {
		t.Errorf("carry on: %d minutes at the top after %d missed minutes, %d after %d; want the longer lump to hold longer",
			short, shortLump, long, longLump)
	}
	if restarted := minutesAtTop(carry, longLump, long/2); restarted != long {
		t.Errorf("restarted half-way: %d minutes at the top, want %d as without the restart", restarted, long)
	}
	noShort, noLong := minutesAtTop(-1, shortLump, 0), minutesAtTop(-1, longLump, 0)
	if noShort != noLong || noLong >= long {
		t.Errorf("carry off: %d and %d minutes at the top, want them equal and below %d", noShort, noLong, long)
	}
}

// The warm-up: without a season of history the peak seen so far stands
// beside the reactive rules; with the model's history it is gone.
func TestWarmUpHoldsThePeakSoFar(t *testing.T) {
	p := testPlanner()
	p.Bounds.NoWarmUpPeak = false
	c, err := New(p, hourly(func([]int) model.Forecaster { return constant(100) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Refit(t0, flat(5, 60)); err != nil {
		t.Fatal(err)
	}
	st := c.Decide(t0, planner.Observation{At: t0, Span: time.Minute, DemandRPS: 30, Utilisation: 0.5}, 6)
	if st.Desired != 6 || c.Level() != planner.GateWarmUp || !strings.Contains(st.Reason, "warm-up: the peak so far, 60 req/s") {
		t.Errorf("desired %d (%s) at level %s, want the 60 req/s peak's 6 while warming up", st.Desired, st.Reason, c.Level())
	}
	if _, err := c.Refit(t0.Add(time.Hour), flat(72, 60)); err != nil {
		t.Fatal(err)
	}
	if c.warmingUp() {
		t.Error("still warming up with three seasons of history")
	}
}

// The error pools kept between plans are the ones the errors give now:
// a refit that scores new errors, or a shadow that pools a wider spread
// of slots from the same memory, never reads an older or another pool.
func TestSlotErrorsKeptOnlyWhileTheErrorsHold(t *testing.T) {
	p := testPlanner()
	p.Bounds.MinErrors = 3
	s := hourly(func([]int) model.Forecaster { return constant(100) })
	s.RefitEvery = time.Hour
	c, err := New(p, s)
	if err != nil {
		t.Fatal(err)
	}
	wide := p
	wide.Bounds.SlotSpread = 4
	shadow, err := c.Shadow(wide, Strategy{})
	if err != nil {
		t.Fatal(err)
	}
	const days = 6
	start := t0.Add(-days * 24 * time.Hour)
	history := burstAt10(start, days*24+24)
	fresh := func(ctl *Controller, at time.Time) []float64 {
		ctl.slotPools = slotPoolCache{}
		return ctl.slotErrors(at, 0)
	}
	checked := 0
	for h := 24; h <= days*24+12; h++ {
		at := start.Add(time.Duration(h) * time.Hour)
		probe := at.Add(23 * time.Hour) // its pool holds the step this refit scores
		before := slices.Clone(c.slotErrors(probe, 0))
		if _, err := c.Refit(at, history[:h]); err != nil {
			t.Fatal(err)
		}
		kept, want := slices.Clone(c.slotErrors(probe, 0)), fresh(c, probe)
		if !slices.Equal(kept, want) {
			t.Fatalf("at %v: pool kept across the refit %v, the errors give %v (before it: %v)", at, kept, want, before)
		}
		c.slotErrors(probe, 0)
		if got, want := slices.Clone(shadow.slotErrors(probe, 0)), fresh(shadow, probe); !slices.Equal(got, want) {
			t.Fatalf("at %v: the wider shadow read %v, its spread gives %v", at, got, want)
		}
		if len(want) > 0 {
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no pool held errors: the test checked nothing")
	}
}

// Forgive sets the calibration back to a memory taken before a lump of
// misses, and leaves alone a memory already as loose or looser, and one
// out of range.
func TestForgiveSetsTheCalibrationBack(t *testing.T) {
	_, c, observe := calibrating(t)
	observe(40, 100, 11)
	before, q0 := c.CalibrationMemory(), c.Quantile()
	observe(30, 200, 11) // every request late
	after, q1 := c.CalibrationMemory(), c.Quantile()
	if !(after < before && q1 > q0) {
		t.Fatalf("the misses moved the memory %v → %v and the quantile %v → %v; want both stricter", before, after, q0, q1)
	}
	cases := []struct {
		name   string
		lnTail float64
		want   float64 // the memory after
	}{
		{"back to before the misses", before, before},
		{"a memory stricter than now", after - 1, after},
		{"not a memory", math.NaN(), after},
		{"out of range", 0.5, after},
		{"past the calibration's loosest", 0, math.Log(1 - planner.DefaultMinQuantile)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := c.Policy()
			defer func() {
				if err := c.RestorePolicy(saved); err != nil {
					t.Fatal(err)
				}
			}()
			c.Forgive(tc.lnTail)
			if got := c.CalibrationMemory(); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("memory %v, want %v", got, tc.want)
			}
			if want := 1 - math.Exp(math.Max(tc.want, math.Log(1-planner.DefaultMaxQuantile))); math.Abs(c.Quantile()-want) > 1e-12 {
				t.Errorf("quantile %v, want %v", c.Quantile(), want)
			}
		})
	}
}
