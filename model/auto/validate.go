package auto

import (
	"math"
	"slices"
	"sort"
)

// Weights of the validation score: a candidate's error at one origin is
// sMAPE/smapeUnit + MASE/maseUnit, the two terms of M4's OWA with the
// Naive2 figures of M4 Hourly as units, so both count about equally. They
// are the published whole-set averages (accuracy.Naive2HourlySMAPE and
// Naive2HourlyMASE), used as fixed units only; no per-series test value
// enters the score.
const (
	smapeUnit = 18.383
	maseUnit  = 2.395
)

// closeness is how much worse than the best the second-best candidate
// may score and still be averaged with it: two forecasts that validate
// about equally well make a better forecast together, while averaging
// the best with a clearly worse one only dilutes it. Chosen on the M4
// Hourly holdout split and the first half of the recorded traces' origins
// (see the package documentation).
const closeness = 0.3

// validationOrigins returns the origins (steps before the end of the
// history) to validate from and the pool cut to the candidates that have
// enough history at every origin.
//
// The origins are h, 2h, … (the latest horizons): up to maxOrigins of
// them while every candidate of the clock's season (and every
// non-seasonal one) keeps the history it needs before the deepest, and at
// least two when the history allows no more; candidates without enough
// history at the deepest are left out (those of a detected season first:
// the clock's are worth more than another origin, a detected season's
// are not). Then one and two weeks back (the same time
// of the week as the forecast, which the latest horizons cannot tell from
// another day: a Saturday forecast is checked against last Saturday),
// when no remaining candidate loses its place for them.
func validationOrigins(n, h, week int, pool []candidate, maxOrigins int) ([]int, []candidate) {
	minNeed, clockNeed := math.MaxInt, 0
	for _, c := range pool {
		minNeed = min(minNeed, c.need)
		if !c.detected {
			clockNeed = max(clockNeed, c.need)
		}
	}
	depth := func(need int) int { // origins k·h with n − k·h ≥ need + 1
		k := 0
		for k < maxOrigins && n-(k+1)*h >= need+1 {
			k++
		}
		return k
	}
	k := max(depth(clockNeed), min(depth(minNeed), 2))
	if k == 0 {
		return nil, nil
	}
	var origins []int
	for i := 1; i <= k; i++ {
		origins = append(origins, i*h)
	}
	var kept []candidate
	keptNeed := 0
	for _, c := range pool {
		if n-k*h >= c.need+1 {
			kept = append(kept, c)
			keptNeed = max(keptNeed, c.need)
		}
	}
	if week > 0 {
		for _, o := range []int{week, 2 * week} {
			if o >= h && !slices.Contains(origins, o) && n-o >= keptNeed+1 {
				origins = append(origins, o)
			}
		}
	}
	return origins, kept
}

// validation holds every candidate's forecasts of the held-out stretches
// and its score.
type validation struct {
	x       []float64 // the history as recorded (errors, intervals)
	fit     []float64 // the history the candidates forecast from (despiked)
	h       int
	origins []int
	pool    []candidate
	// fc[i][k] is candidate i's forecast from origin k.
	fc    [][][]float64
	score []float64
}

// validate forecasts x[n−o : n−o+h] from fit[:n−o] with every candidate at
// every origin o and scores the errors against fit (so one burst in the
// held-out stretch does not decide the ranking).
func validate(x, fit []float64, h int, origins []int, pool []candidate) *validation {
	v := &validation{x: x, fit: fit, h: h, origins: origins, pool: pool,
		fc: make([][][]float64, len(pool)), score: make([]float64, len(pool))}
	scales := make([]float64, len(origins))
	for k, o := range origins {
		scales[k] = maeScale(fit[:len(fit)-o])
	}
	for i, c := range pool {
		v.fc[i] = make([][]float64, len(origins))
		for k, o := range origins {
			train := fit[:len(fit)-o]
			actual := fit[len(fit)-o : len(fit)-o+h]
			f := c.point(train, h)
			v.fc[i][k] = f
			v.score[i] += errorScore(actual, f, scales[k])
		}
		if math.IsNaN(v.score[i]) {
			v.score[i] = math.Inf(1)
		}
	}
	return v
}

// choose returns the candidates to average: the best, and the next ones
// (up to top in all) while each scores within closeness of the best.
func (v *validation) choose(top int) []int {
	idx := make([]int, len(v.pool))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v.score[idx[a]] < v.score[idx[b]] })
	out := idx[:1]
	for _, i := range idx[1:min(top, len(idx))] {
		if v.score[i] <= (1+closeness)*v.score[idx[0]] {
			out = append(out, i)
		}
	}
	return out
}

// errorScore is sMAPE/smapeUnit + MAE/scale/maseUnit.
func errorScore(actual, f []float64, scale float64) float64 {
	var smape, mae float64
	for j, y := range actual {
		d := math.Abs(y - f[j])
		if den := math.Abs(y) + math.Abs(f[j]); den > 0 {
			smape += 200 * d / den
		}
		mae += d
	}
	h := float64(len(actual))
	return smape/h/smapeUnit + mae/h/scale/maseUnit
}

// maeScale is the mean absolute one-step change of x, MASE's scale for the
// validation score (floored so a flat stretch cannot divide by zero).
func maeScale(x []float64) float64 {
	s, absSum := 0.0, 0.0
	for t := 1; t < len(x); t++ {
		s += math.Abs(x[t] - x[t-1])
	}
	for _, v := range x {
		absSum += math.Abs(v)
	}
	n := float64(max(len(x)-1, 1))
	floor := 1e-9 * (absSum/float64(max(len(x), 1)) + 1)
	return math.Max(s/n, floor)
}
