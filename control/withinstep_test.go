package control

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// binRatio is the width of one histogram bin as a ratio: 2^(1/6).
var binRatio = math.Exp2(1.0 / binsPerOctave)

// gather feeds w one step of observations from start, spread evenly over
// the step (each covering step/len(rps)), and finishes it with
// recentMean.
func gather(t *testing.T, w *withinStep, start time.Time, rps []float64, recentMean float64) {
	t.Helper()
	span := w.step / time.Duration(len(rps))
	for i, v := range rps {
		w.add(start.Add(time.Duration(i+1)*span), span, v, recentMean)
	}
	w.finish(recentMean)
}

// histOf is a histogram with weight 1 at each ratio of zs.
func histOf(zs ...float64) []float32 {
	h := make([]float32, zBins+1)
	for _, z := range zs {
		h[zIndex(z)]++
	}
	return h
}

// ratiosOf pools histOf(zs...).
func ratiosOf(t *testing.T, zs ...float64) ratios {
	t.Helper()
	r, ok := poolOf([][]float32{histOf(zs...)})
	if !ok {
		t.Fatalf("pool of %v holds nothing", zs)
	}
	return r
}

// near reports whether got is want to a relative tol.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// The bins tile [zLow, zHigh] on a log scale: zEdge(0) is zLow,
// zEdge(zBins) is zHigh, each bin is 2^(1/6) wide, and the log-midpoint
// of bin b has index b+1 (index 0 being z = 1 exactly). Ratios beyond the
// ends fall in the end bins.
func TestZIndexAndZEdgeRoundTrip(t *testing.T) {
	if zEdge(0) != zLow || !near(zEdge(zBins), zHigh, 1e-12) {
		t.Fatalf("edges %v … %v, want %v … %v", zEdge(0), zEdge(zBins), zLow, zHigh)
	}
	for b := range zBins {
		if r := zEdge(b+1) / zEdge(b); !near(r, binRatio, 1e-12) {
			t.Errorf("bin %d is %v wide, want %v", b, r, binRatio)
		}
		mid := zEdge(b) * math.Sqrt(binRatio)
		if got := zIndex(mid); got != b+1 {
			t.Errorf("zIndex(%v), the middle of bin %d, = %d, want %d", mid, b, got, b+1)
		}
	}
	cases := []struct {
		name string
		z    float64
		want int
	}{
		{"one is the point mass", 1, 0},
		{"one to a part in a billion is the point mass", 1 + 1e-10, 0},
		{"just above one is the bin starting at one", 1 + 1e-6, 1 + 4*binsPerOctave},
		{"just below one is the bin ending at one", 1 - 1e-6, 4 * binsPerOctave},
		{"zero is the first bin", 0, 1},
		{"below zLow is the first bin", zLow / 10, 1},
		{"above zHigh is the last bin", zHigh * 10, zBins},
		{"far above zHigh is the last bin", 1e12, zBins},
	}
	for _, tc := range cases {
		if got := zIndex(tc.z); got != tc.want {
			t.Errorf("%s: zIndex(%v) = %d, want %d", tc.name, tc.z, got, tc.want)
		}
	}
}

// add gathers a step's observations, weighted by their spans, and finish
// puts their ratios to the step's mean into the step's slot of the day:
// 50, 100, 150, 100 req/s over four quarters have mean 100, so half the
// weight is the point mass at 1 and a quarter each sits in the bins of
// 0.5 and 1.5. The pooled deviations (recent mean 100) are the same
// here; with a recent mean of 200 they halve, u = 0.75 and 1.25.
func TestAddAndFinishFillTheStepsSlot(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	if len(w.slots) != 24 || w.slots[3] != nil {
		t.Fatalf("new: %d slots (slot 3 %v), want 24 empty", len(w.slots), w.slots[3])
	}
	start := t0.Add(3 * time.Hour) // slot 3
	gather(t, w, start, []float64{50, 100, 150, 100}, 200)
	want := make([]float32, zBins+1)
	want[0], want[zIndex(0.5)], want[zIndex(1.5)] = 0.5, 0.25, 0.25
	if !slices.Equal(w.slots[3], want) {
		t.Errorf("slot 3 = %v, want %v", w.slots[3], want)
	}
	for s, h := range w.slots {
		if s != 3 && h != nil {
			t.Errorf("slot %d = %v, want nothing", s, h)
		}
	}
	pooled := make([]float32, zBins+1)
	pooled[0], pooled[zIndex(0.75)], pooled[zIndex(1.25)] = 0.5, 0.25, 0.25
	if !slices.Equal(w.pooled, pooled) {
		t.Errorf("pooled = %v, want %v", w.pooled, pooled)
	}
	if len(w.obs) != 0 || w.mean != 0 || w.weight != 0 {
		t.Errorf("after finish: %d observations, sum %v, weight %v; want none", len(w.obs), w.mean, w.weight)
	}

	// Spans weigh: 40 req/s for 45 minutes and 160 for 15 have mean 70;
	// the ratios 4/7 and 16/7 weigh 0.75 and 0.25.
	w2 := newWithinStep(time.Hour, 24)
	w2.add(start.Add(45*time.Minute), 45*time.Minute, 40, 0)
	w2.add(start.Add(time.Hour), 15*time.Minute, 160, 0)
	w2.finish(0)
	want = make([]float32, zBins+1)
	want[zIndex(4.0/7)], want[zIndex(16.0/7)] = 0.75, 0.25
	if !slices.Equal(w2.slots[3], want) {
		t.Errorf("weighted slot 3 = %v, want %v", w2.slots[3], want)
	}
	if w2.pooled != nil {
		t.Errorf("pooled without a recent mean = %v, want nothing", w2.pooled)
	}
	if _, ok := w2.additive(); ok {
		t.Error("additive() ok without a recent mean")
	}
}

// The next step's first observation finishes the step before: its ratios
// land in its own slot, not the new one's.
func TestAddFinishesTheStepBeforeWhenTheNextBegins(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	start := t0.Add(5 * time.Hour) // slot 5
	w.add(start.Add(30*time.Minute), 30*time.Minute, 100, 0)
	w.add(start.Add(time.Hour), 30*time.Minute, 300, 0)
	if w.slots[5] != nil {
		t.Fatalf("slot 5 filled before the step ended: %v", w.slots[5])
	}
	// An observation ending at 06:30 over 30m belongs to the step at 06:00.
	w.add(start.Add(90*time.Minute), 30*time.Minute, 100, 0)
	want := make([]float32, zBins+1)
	want[zIndex(0.5)], want[zIndex(1.5)] = 0.5, 0.5
	if !slices.Equal(w.slots[5], want) || w.slots[6] != nil {
		t.Errorf("slot 5 = %v, slot 6 = %v; want %v and nothing", w.slots[5], w.slots[6], want)
	}
	if len(w.obs) != 1 || w.weight != 1800 {
		t.Errorf("gathering %d observations of weight %v, want the one of 06:00's step (1800 s)", len(w.obs), w.weight)
	}
}

// finish leaves the slot as it was for a step it cannot read: fewer than
// two observations, no demand, or a mean under 1% of the recent mean
// (near-empty steps read any request as a huge ratio); add ignores
// observations with no span or a demand that is NaN or negative.
func TestFinishSkipsStepsItCannotRead(t *testing.T) {
	cases := []struct {
		name       string
		rps        []float64
		spans      []time.Duration
		recentMean float64
	}{
		{"one observation", []float64{100}, []time.Duration{time.Hour}, 0},
		{"no demand", []float64{0, 0}, []time.Duration{30 * time.Minute, 30 * time.Minute}, 0},
		{"a near-empty step", []float64{0.5, 1.3}, []time.Duration{30 * time.Minute, 30 * time.Minute}, 100},
		{"no span", []float64{100, 200}, []time.Duration{0, -time.Minute}, 0},
		{"NaN and negative demand", []float64{math.NaN(), -5}, []time.Duration{30 * time.Minute, 30 * time.Minute}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWithinStep(time.Hour, 24)
			at := t0.Add(2 * time.Hour)
			for i, v := range tc.rps {
				at = at.Add(30 * time.Minute)
				w.add(at, tc.spans[i], v, tc.recentMean)
			}
			w.finish(tc.recentMean)
			if w.slots[2] != nil || w.pooled != nil {
				t.Errorf("slot 2 = %v, pooled = %v; want nothing", w.slots[2], w.pooled)
			}
		})
	}
	// A mean of exactly 1% of the recent mean counts.
	w := newWithinStep(time.Hour, 24)
	gather(t, w, t0, []float64{0.5, 1.5}, 100)
	if w.slots[0] == nil {
		t.Error("a step at 1% of the recent mean was skipped")
	}
}

// A slot's weights decay by decayPerDay a day: the same slot a day later
// holds the earlier weights times 0.93, two days later times 0.93², and
// the pooled histogram decays alike.
func TestSlotWeightsDecayByTheDay(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	gather(t, w, t0, []float64{50, 150}, 100) // 0.5 and 1.5, weight ½ each
	gather(t, w, t0.Add(24*time.Hour), []float64{100, 100}, 100)
	gather(t, w, t0.Add(72*time.Hour), []float64{100, 100}, 100)
	// Day 0's halves decay by 0.93³ by day 3; day 1's point mass of 1 by
	// 0.93²; day 3's adds 1.
	h := w.slots[0]
	wantPoint, wantHalf := 1+0.93*0.93, 0.5*0.93*0.93*0.93
	if !near(float64(h[0]), wantPoint, 1e-6) || !near(float64(h[zIndex(0.5)]), wantHalf, 1e-6) ||
		!near(float64(h[zIndex(1.5)]), wantHalf, 1e-6) {
		t.Errorf("slot 0: point %v, bins of 0.5 and 1.5 %v and %v; want %v, %v, %v",
			h[0], h[zIndex(0.5)], h[zIndex(1.5)], wantPoint, wantHalf, wantHalf)
	}
	if p := w.pooled; !near(float64(p[0]), wantPoint, 1e-6) || !near(float64(p[zIndex(0.5)]), wantHalf, 1e-6) {
		t.Errorf("pooled: point %v, bin of 0.5 %v; want %v, %v", p[0], p[zIndex(0.5)], wantPoint, wantHalf)
	}
	// Another slot the same day does not decay slot 0.
	gather(t, w, t0.Add(73*time.Hour), []float64{100, 100}, 100)
	if w.slots[0][0] != h[0] {
		t.Errorf("slot 0's point moved to %v when slot 1 was filled", w.slots[0][0])
	}
}

// pool sums the slots within spread of s, wrapping around the season
// (slot 0's neighbours are 23 and 1), and says when they hold nothing.
func TestPoolSumsTheNeighbouringSlots(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	w.slots[23] = histOf(1, 1)
	w.slots[1] = histOf(2)
	w.slots[2] = histOf(4)
	cases := []struct {
		name          string
		s, spread     int
		point, total  float64
		ok            bool
		holdsTwo      bool // the bin of 2 has weight
		holdsFourBins bool // the bin of 4 has weight
	}{
		{"slot 0 alone is empty", 0, 0, 0, 0, false, false, false},
		{"slot 0 with its neighbours wraps to 23", 0, 1, 2, 3, true, true, false},
		{"slot 1 with spread 1", 1, 1, 0, 2, true, true, true},
		{"slot 12 with spread 2 is empty", 12, 2, 0, 0, false, false, false},
		{"a spread as wide as the season", 12, 12, 2, 4, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := w.pool(tc.s, tc.spread)
			if ok != tc.ok || r.point != tc.point || r.total != tc.total ||
				(r.bins[zIndex(2)-1] > 0) != tc.holdsTwo || (r.bins[zIndex(4)-1] > 0) != tc.holdsFourBins {
				t.Errorf("pool(%d, %d) = point %v total %v ok %v (bins of 2, 4: %v, %v); want %v %v %v (%v, %v)",
					tc.s, tc.spread, r.point, r.total, ok, r.bins[zIndex(2)-1], r.bins[zIndex(4)-1],
					tc.point, tc.total, tc.ok, tc.holdsTwo, tc.holdsFourBins)
			}
		})
	}
	if _, ok := newWithinStep(time.Hour, 0).pool(0, 1); ok {
		t.Error("pool of a season of no slots is ok")
	}
}

// The cdf of a pool: 0 at and below 0; the point mass at 1 counts from 1
// on; at a bin edge it is the mass of the bins below; inside a bin it is
// log-linear (the first bin linear from 0); 1 from the top on.
func TestRatiosCDF(t *testing.T) {
	// Weights: point 2; bin of 0.5 (b = 18, [0.5, 0.561)) 1; bin of 2
	// (b = 30, [2, 2.245)) 1; total 4.
	r := ratiosOf(t, 1, 1, 0.52, 2.1)
	cases := []struct {
		name string
		x    float64
		want float64
	}{
		{"zero", 0, 0},
		{"negative", -1, 0},
		{"below every ratio", 0.3, 0},
		{"the lower edge of the bin of 0.5", 0.5, 0},
		{"the log-middle of the bin of 0.5", 0.5 * math.Sqrt(binRatio), 0.125},
		{"the upper edge of the bin of 0.5", 0.5 * binRatio, 0.25},
		{"just below one", 0.999, 0.25},
		{"one takes the point mass", 1, 0.75},
		{"the lower edge of the bin of 2", 2, 0.75},
		{"a third into the bin of 2 (log)", 2 * math.Exp2(1.0/3/binsPerOctave), 0.75 + 0.25/3},
		{"the top", r.top(), 1},
		{"beyond zHigh", 100, 1},
	}
	for _, tc := range cases {
		if got := r.cdf(tc.x); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: cdf(%v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
	if top := r.top(); !near(top, 2*binRatio, 1e-12) {
		t.Errorf("top = %v, want the upper edge of the bin of 2, %v", top, 2*binRatio)
	}
	// The first bin holds everything below zLow and is linear from 0:
	// a quarter of the way to its upper edge has a quarter of its mass.
	low := ratiosOf(t, 0.01, 0.01, 1, 1)
	if got := low.cdf(zEdge(1) / 4); !near(got, 0.125, 1e-12) {
		t.Errorf("first bin: cdf(%v) = %v, want 0.125", zEdge(1)/4, got)
	}
}

// flat pools are all point mass: their quantiles are 1 at every level
// and their top is 1; a single observation off the mean makes them not
// flat.
func TestFlatRatios(t *testing.T) {
	r := ratiosOf(t, 1, 1, 1)
	if !r.flat() || r.top() != 1 {
		t.Fatalf("flat %v, top %v; want flat with top 1", r.flat(), r.top())
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.999} {
		if got := r.quantile(q); got != 1 {
			t.Errorf("flat quantile(%v) = %v, want 1", q, got)
		}
	}
	if ratiosOf(t, 1, 1, 1.2).flat() {
		t.Error("a pool with a ratio of 1.2 is flat")
	}
}

// The quantile of a pool of known ratios (lognormal, a fifth of them at
// the mean exactly) is within one bin of the sample's own: the cdf is
// exact at the bin edges, so the estimate lies in the bin holding the
// sample quantile, a factor of 2^(1/6) ≈ 1.12 at most either way, with
// the bisection's relative 1e-4 on top.
func TestQuantileIsWithinOneBinOfTheSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zs := make([]float64, 0, 2000)
	for i := range cap(zs) {
		if i%5 == 0 {
			zs = append(zs, 1)
			continue
		}
		// σ = 0.6 keeps the ratios well inside [1/16, 32].
		zs = append(zs, math.Exp(0.6*rng.NormFloat64()))
	}
	r := ratiosOf(t, zs...)
	sorted := slices.Clone(zs)
	slices.Sort(sorted)
	tol := binRatio * (1 + 1e-4)
	prev := 0.0
	for _, q := range []float64{0.05, 0.25, 0.45, 0.5, 0.55, 0.75, 0.9, 0.99, 0.999} {
		want := sorted[int(math.Ceil(q*float64(len(sorted))))-1]
		got := r.quantile(q)
		if got > want*tol || got < want/tol {
			t.Errorf("quantile(%v) = %v, sample's %v: more than a bin (×%.4f) apart", q, got, want, binRatio)
		}
		if got < prev {
			t.Errorf("quantile(%v) = %v below the quantile of a lower level, %v", q, got, prev)
		}
		prev = got
	}
	// The median of this sample is the point mass: the estimate is 1.
	if m := sorted[len(sorted)/2-1]; m == 1 {
		if got := r.quantile(0.5); !near(got, 1, 1e-4) {
			t.Errorf("median %v, want 1 (the point mass)", got)
		}
	}
}

// invert returns the least x in [0, hi] with cdf(x) ≥ level to a relative
// 1e-4, hi itself when no lower x reaches it, and 0 for hi ≤ 0.
func TestInvert(t *testing.T) {
	linear := func(x float64) float64 { return math.Min(x/10, 1) } // uniform on [0, 10]
	cases := []struct {
		name             string
		hi, level, want  float64
		relTol, absSlack float64
	}{
		{"the middle of a uniform", 10, 0.5, 5, 1e-4, 0},
		{"near the bottom of a uniform", 10, 0.01, 0.1, 1e-4, 0},
		{"a level no x reaches below hi is hi", 10, 1, 10, 0, 0},
		{"a level above 1 is hi", 10, 1.5, 10, 0, 0},
		{"no range is 0", 0, 0.5, 0, 0, 0},
		{"a negative range is 0", -3, 0.5, 0, 0, 0},
	}
	for _, tc := range cases {
		got := invert(linear, tc.hi, tc.level)
		if got < tc.want || got > tc.want*(1+tc.relTol)+tc.absSlack {
			t.Errorf("%s: invert(hi %v, level %v) = %v, want %v (to a relative %v, from above)",
				tc.name, tc.hi, tc.level, got, tc.want, tc.relTol)
		}
	}
}

// With flat ratios the mixture is the errors' own distribution: the
// q-quantile of base + e, e the sorted errors with equal weights, the
// ⌈q·n⌉-th smallest (levels ≤ 0 count as no demand). With one error it
// is (base + e) times the ratios' quantile. Both to the bisection's
// relative 1e-4, from above.
func TestMixtureQuantile(t *testing.T) {
	flat := ratiosOf(t, 1)
	errs := []float64{-20, -10, 0, 10, 20, 30, 40, 50, 60, 70} // levels 80 … 170
	cases := []struct {
		name string
		base float64
		errs []float64
		r    ratios
		q    float64
		want float64
	}{
		{"flat: the median is the 5th level", 100, errs, flat, 0.5, 120},
		{"flat: q 0.51 is the 6th level", 100, errs, flat, 0.51, 130},
		{"flat: q 0.9 is the 9th level", 100, errs, flat, 0.9, 160},
		{"flat: q 0.95 is the top level", 100, errs, flat, 0.95, 170},
		{"flat: q 0.05 is the lowest level", 100, errs, flat, 0.05, 80},
		{"flat: levels at or below 0 are no demand", 10, errs, flat, 0.3, 10},
		{"one error scales the ratios' quantile", 100, []float64{20}, ratiosOf(t, 0.5, 1, 1.5, 2), 0.9,
			120 * ratiosOf(t, 0.5, 1, 1.5, 2).quantile(0.9)},
		{"one error at the median ratio", 80, []float64{0}, ratiosOf(t, 0.5, 1, 1, 1.5), 0.5, 80},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mixtureQuantile(tc.base, tc.errs, tc.r, tc.q)
			if got < tc.want*(1-1e-4) || got > tc.want*(1+2e-4) {
				t.Errorf("mixtureQuantile(%v, %v, q %v) = %v, want %v", tc.base, tc.errs, tc.q, got, tc.want)
			}
		})
	}
	// Every level at or below 0: no demand, whatever the ratios.
	if got := mixtureQuantile(10, []float64{-30, -20, -10}, ratiosOf(t, 0.5, 2), 0.9); got != 0 {
		t.Errorf("no demand at any level: %v, want 0", got)
	}
}

// additiveQuantile with flat deviations is the q-quantile of base + e;
// with one error it is base + e + scale·(u's quantile − 1).
func TestAdditiveQuantile(t *testing.T) {
	flat := ratiosOf(t, 1)
	errs := []float64{-20, -10, 0, 10, 20, 30, 40, 50, 60, 70}
	u := ratiosOf(t, 0.5, 1, 1.5, 2, 3)
	cases := []struct {
		name        string
		base        float64
		errs        []float64
		r           ratios
		scale, q    float64
		want        float64
		relTolAbove float64
	}{
		{"flat: the median is the 5th level", 100, errs, flat, 50, 0.5, 120, 2e-4},
		{"flat: q 0.9 is the 9th level", 100, errs, flat, 50, 0.9, 160, 2e-4},
		{"one error adds the scaled deviation", 100, []float64{20}, u, 50, 0.9, 120 + 50*(u.quantile(0.9)-1), 2e-4},
		{"a deviation below the mean lowers it", 100, []float64{0}, u, 50, 0.1, 100 + 50*(u.quantile(0.1)-1), 2e-4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := additiveQuantile(tc.base, tc.errs, tc.r, tc.scale, tc.q)
			if got < tc.want*(1-1e-4) || got > tc.want*(1+tc.relTolAbove) {
				t.Errorf("additiveQuantile(%v, %v, scale %v, q %v) = %v, want %v", tc.base, tc.errs, tc.scale, tc.q, got, tc.want)
			}
		})
	}
}

// The mixture's and the additive quantiles rise with q, and with bursty
// ratios the mixture's lies above the flat one's at a high level.
func TestMixtureAndAdditiveQuantilesAreMonotoneInQ(t *testing.T) {
	errs := []float64{-30, -5, 0, 4, 12, 25, 40}
	r := ratiosOf(t, 0.3, 0.7, 1, 1, 1, 1.4, 2.5, 6)
	prevMix, prevAdd := math.Inf(-1), math.Inf(-1)
	for q := 0.5; q < 0.9995; q += 0.001 {
		mix := mixtureQuantile(100, errs, r, q)
		add := additiveQuantile(100, errs, r, 80, q)
		if mix < prevMix || add < prevAdd {
			t.Fatalf("q %v: mixture %v after %v, additive %v after %v: not monotone", q, mix, prevMix, add, prevAdd)
		}
		prevMix, prevAdd = mix, add
	}
	if flat := mixtureQuantile(100, errs, ratiosOf(t, 1), 0.99); !(mixtureQuantile(100, errs, r, 0.99) > 2*flat) {
		t.Errorf("bursty mixture at 0.99 = %v, want well above the flat %v", mixtureQuantile(100, errs, r, 0.99), flat)
	}
}

// restore(state()) gives back what was learned: identical histograms and
// quantiles in every slot, the same pooled deviations, and the step being
// gathered, so the next observation finishes it alike. The state is a
// copy: later learning does not change it.
func TestWithinStepStateRoundTrip(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	rng := rand.New(rand.NewPCG(3, 4))
	for h := range 24 * 9 {
		rps := make([]float64, 6)
		for i := range rps {
			rps[i] = 100 * math.Exp(0.4*rng.NormFloat64())
		}
		gather(t, w, t0.Add(time.Duration(h)*time.Hour), rps, 100)
	}
	next := t0.Add(24 * 9 * time.Hour)
	w.add(next.Add(10*time.Minute), 10*time.Minute, 80, 100) // half a step gathered
	w.add(next.Add(20*time.Minute), 10*time.Minute, 130, 100)
	st := w.state()
	saved := w.state()

	got := newWithinStep(time.Hour, 24)
	got.restore(st)
	if !reflect.DeepEqual(got.state(), st) {
		t.Fatal("state of the restored differs from the state restored")
	}
	for s := range 24 {
		a, okA := w.pool(s, 1)
		b, okB := got.pool(s, 1)
		if okA != okB || !okA {
			t.Fatalf("slot %d: ok %v and %v, want both", s, okA, okB)
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			if qa, qb := a.quantile(q), b.quantile(q); qa != qb {
				t.Errorf("slot %d quantile(%v): %v before, %v restored", s, q, qa, qb)
			}
		}
	}
	ua, _ := w.additive()
	ub, _ := got.additive()
	if ua.quantile(0.95) != ub.quantile(0.95) {
		t.Errorf("additive quantile %v before, %v restored", ua.quantile(0.95), ub.quantile(0.95))
	}
	// The step in progress finishes alike in both.
	for _, x := range []*withinStep{w, got} {
		x.add(next.Add(70*time.Minute), 10*time.Minute, 100, 100)
	}
	if !reflect.DeepEqual(w.state(), got.state()) {
		t.Error("after one more observation the original and the restored differ")
	}
	// Learning after the state was taken did not reach into it, nor did
	// the restored copy share its slices.
	if !reflect.DeepEqual(st, saved) {
		t.Error("the state taken changed with later learning")
	}
	got.slots[0][0] += 1
	if st.Slots[0][0] == got.slots[0][0] {
		t.Error("the restored controller shares the state's slices")
	}
}

// restore refuses a state of another season or bin layout, or none,
// leaving nothing learned; a pooled histogram of another layout alone is
// dropped, the slots kept.
func TestWithinStepRestoreRefusesAnotherLayout(t *testing.T) {
	w := newWithinStep(time.Hour, 24)
	gather(t, w, t0, []float64{50, 150}, 100)
	good := w.state()
	cases := []struct {
		name       string
		edit       func(*WithinStepState)
		wantSlots  bool
		wantPooled bool
	}{
		{"the state itself", func(*WithinStepState) {}, true, true},
		{"none", func(st *WithinStepState) { *st = WithinStepState{} }, false, false},
		{"another season", func(st *WithinStepState) {
			st.Slots, st.LastDay = st.Slots[:12], st.LastDay[:12]
		}, false, false},
		{"last days of another season", func(st *WithinStepState) { st.LastDay = st.LastDay[:23] }, false, false},
		{"another bin layout", func(st *WithinStepState) { st.Slots[0] = st.Slots[0][:10] }, false, false},
		{"a pooled histogram of another layout", func(st *WithinStepState) { st.Pooled = st.Pooled[:10] }, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := w.state()
			tc.edit(&st)
			got := newWithinStep(time.Hour, 24)
			gather(t, got, t0.Add(5*time.Hour), []float64{10, 30}, 20) // learning to be replaced
			got.restore(st)
			_, okSlots := got.pool(0, 12)
			_, okPooled := got.additive()
			if okSlots != tc.wantSlots || okPooled != tc.wantPooled || len(got.slots) != 24 {
				t.Errorf("restored: slots %v, pooled %v, %d slots; want %v, %v, 24",
					okSlots, okPooled, len(got.slots), tc.wantSlots, tc.wantPooled)
			}
			if tc.wantSlots && !slices.Equal(got.slots[0], good.Slots[0]) {
				t.Errorf("slot 0 = %v, want %v", got.slots[0], good.Slots[0])
			}
		})
	}
}

// A pool is cached until the histograms change: a finished step in any
// slot, or a restore, makes the next pool read the new weights.
func TestPoolCacheFollowsTheHistograms(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	w := newWithinStep(time.Hour, 24)
	gather(t, w, start, []float64{1, 3}, 2)
	before, ok := w.pool(0, 1)
	if !ok {
		t.Fatal("pool of a gathered slot holds nothing")
	}
	add, _ := w.additive()
	gather(t, w, start.Add(time.Hour), []float64{2, 2, 8}, 4)
	after, _ := w.pool(0, 1)
	if after.total <= before.total {
		t.Errorf("pool total %v after a step in a neighbouring slot, %v before: the cache kept stale sums", after.total, before.total)
	}
	add2, _ := w.additive()
	if add2.total <= add.total {
		t.Errorf("additive total %v after a step, %v before: the cache kept stale sums", add2.total, add.total)
	}
	w.restore(WithinStepState{})
	if r, ok := w.pool(0, 1); ok || r.total != 0 {
		t.Errorf("pool after restoring an empty state = total %v, ok %v; want nothing", r.total, ok)
	}
	fresh := newWithinStep(time.Hour, 24)
	gather(t, fresh, start, []float64{1, 3}, 2)
	gather(t, fresh, start.Add(time.Hour), []float64{2, 2, 8}, 4)
	want, _ := fresh.pool(0, 1)
	w2 := newWithinStep(time.Hour, 24)
	gather(t, w2, start, []float64{1, 3}, 2)
	w2.pool(0, 1)
	gather(t, w2, start.Add(time.Hour), []float64{2, 2, 8}, 4)
	if got, _ := w2.pool(0, 1); !reflect.DeepEqual(got, want) {
		t.Errorf("pool read between the steps, then after = %+v; want the uncached %+v", got, want)
	}
}

// The mixture's cdf reads each level's bin from logarithms taken once; it
// agrees with the pool's own cdf of x/l, averaged over the levels, to
// rounding, across the whole range of ratios, at and between the edges.
func TestMixtureCDFAgreesWithThePool(t *testing.T) {
	r := ratiosOf(t, 0.3, 0.7, 1, 1, 1.2, 2.5, 4, 9)
	errs := []float64{-150, -20, -5, 0, 3, 40, 90}
	const base = 100
	m := newMixture(base, errs, r)
	xs := []float64{0, 1e-3, 3, 6.25, 50, 99.9, 100, 100.1, 140, 333, 1000, 3199, 3200, 5000, 1e9}
	for b := 0; b <= zBins; b++ { // every edge, scaled by a level
		xs = append(xs, zEdge(b)*(base+errs[4]))
	}
	for _, x := range xs {
		want := 0.0
		for _, e := range errs {
			if l := base + e; l > 0 {
				want += r.cdf(x / l)
			} else {
				want++
			}
		}
		want /= float64(len(errs))
		if got := m.cdf(x); math.Abs(got-want) > 1e-12 {
			t.Errorf("cdf(%v) = %v, want %v", x, got, want)
		}
	}
}
