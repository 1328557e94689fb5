package holtwinters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// amseReference is the multi-step criterion as it was written before the
// window of origins was laid out as one array of states: the reference
// amse must reproduce bit for bit, counts and sums included.
func amseReference(r *recursion, st *state, y []float64, k, stride int) (crit float64, sumSq []float64, counts []int) {
	phiSum, arCoef := make([]float64, k), make([]float64, k)
	pow, sum := 1.0, 0.0
	for j := range k {
		pow *= r.phi
		sum += pow
		if r.trend {
			phiSum[j] = sum
		}
	}
	z := st.clone()
	z.level, z.trend, z.err = 0, 0, 1
	for i := range z.seas {
		clear(z.seas[i])
	}
	p := 1.0
	for j := range k {
		if r.season == Multiplicative || r.ar == 0 {
			p *= r.ar
			arCoef[j] = p
		} else {
			arCoef[j], _ = r.step(z, math.NaN())
		}
	}
	sumSq, counts = make([]float64, k+1), make([]int, k+1)
	lv, tr, er := make([]float64, 2*k), make([]float64, 2*k), make([]float64, 2*k)
	o := 0
	for t, v := range y {
		if v == v && t > 0 {
			comb := 0.0
			if r.season == Multiplicative {
				comb = 1
			}
			for i := range r.nSeasonal {
				if r.season == Multiplicative {
					comb *= st.seas[i][st.pos[i]]
				} else {
					comb += st.seas[i][st.pos[i]]
				}
			}
			jmax := min(k, t)
			for j := 1; j <= jmax; j += stride {
				i := k - j + o
				f := lv[i] + phiSum[j-1]*tr[i]
				if r.season == Multiplicative {
					f *= comb
				} else {
					f += comb
				}
				d := v - f - arCoef[j-1]*er[i]
				sumSq[j] += d * d
			}
			counts[jmax]++
		}
		yhat, _ := r.step(st, v)
		if math.IsInf(yhat, 0) || yhat != yhat {
			return math.Inf(1), sumSq, counts
		}
		lv[o], tr[o], er[o] = st.level, st.trend, st.err
		lv[o+k], tr[o+k], er[o+k] = st.level, st.trend, st.err
		if o++; o == k {
			o = 0
		}
	}
	for j := k - 1; j >= 1; j-- {
		counts[j] += counts[j+1]
	}
	for j := 1; j <= k; j += stride {
		if counts[j] > 0 {
			crit += sumSq[j] / float64(counts[j])
		}
	}
	crit /= float64(k)
	if crit != crit {
		return math.Inf(1), sumSq, counts
	}
	return crit, sumSq, counts
}

// TestAmseMatchesReference: over random forms of the family, parameters
// and series with gaps, amse gives the reference's criterion, per-horizon
// sums and counts to the bit, for several horizons and strides.
func TestAmseMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for c := range 300 {
		s, p, y := randomCase(rng)
		rec := newRecursion(s, p)
		for _, k := range []int{1, 2, 4, 7} {
			for _, stride := range []int{1, 3} {
				st1, st2 := newState(p, rec.nSeasonal), newState(p, rec.nSeasonal)
				ms := newMultiStep(k, st2)
				ms.stride = stride
				want, wantSq, wantN := amseReference(&rec, st1, y, k, stride)
				got := rec.amse(st2, y, ms)
				name := fmt.Sprintf("case %d %v k=%d stride=%d", c, s, k, stride)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s: amse %v, reference %v", name, got, want)
				}
				for j := 1; j <= k; j++ {
					if math.Float64bits(ms.sumSq[j]) != math.Float64bits(wantSq[j]) || ms.counts[j] != wantN[j] {
						t.Fatalf("%s: horizon %d sum %v count %d, reference %v %d", name, j, ms.sumSq[j], ms.counts[j], wantSq[j], wantN[j])
					}
				}
			}
		}
	}
}

// randomCase draws a form of the family (up to three periods, any trend,
// seasonality, update and AR term), parameters inside its bounds and a
// series with a few missing values.
func randomCase(rng *rand.Rand) (Spec, Params, []float64) {
	periodSets := [][]int{nil, {7}, {12}, {5, 17}, {4, 9, 23}}
	periods := periodSets[rng.IntN(len(periodSets))]
	s := Spec{Trend: Trend(rng.IntN(3)), Periods: periods, AR1: rng.IntN(2) == 0, Update: Update(rng.IntN(2))}
	if len(periods) > 0 {
		s.Seasonality = Seasonality(1 + rng.IntN(2))
	}
	y := make([]float64, 60+rng.IntN(200))
	for i := range y {
		y[i] = 50 + 0.05*float64(i) + 10*math.Sin(float64(i)/3) + 3*rng.NormFloat64()
		if rng.IntN(25) == 0 {
			y[i] = math.NaN()
		}
	}
	p := initialParams(y, s)
	p.Alpha, p.Beta, p.Phi, p.AR = 0.05+0.9*rng.Float64(), 0.01+0.3*rng.Float64(), 0.8+0.18*rng.Float64(), 0.98*(2*rng.Float64()-1)
	for i := range p.Gamma {
		p.Gamma[i] = 0.3 * rng.Float64() * (1 - p.Alpha)
	}
	return s, p, y
}

// TestRunMatchesStep: run leaves the state r.step leaves, observation by
// observation, and the same sum of squared errors, to the bit.
func TestRunMatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 13))
	for c := range 400 {
		s, p, y := randomCase(rng)
		rec := newRecursion(s, p)
		want, got := newState(p, rec.nSeasonal), newState(p, rec.nSeasonal)
		var wantSSE float64
		for _, v := range y {
			_, innov := rec.step(want, v)
			wantSSE += innov * innov
		}
		gotSSE, _ := rec.run(got, y, nil)
		if math.Float64bits(gotSSE) != math.Float64bits(wantSSE) {
			t.Fatalf("case %d %v: run's SSE %v, step's %v", c, s, gotSSE, wantSSE)
		}
		if !sameState(got, want) {
			t.Fatalf("case %d %v: run leaves %+v, step %+v", c, s, got, want)
		}
	}
}

func sameState(a, b *state) bool {
	same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
	if !same(a.level, b.level) || !same(a.trend, b.trend) || !same(a.err, b.err) {
		return false
	}
	for i := range a.seas {
		if a.pos[i] != b.pos[i] {
			return false
		}
		for j := range a.seas[i] {
			if !same(a.seas[i][j], b.seas[i][j]) {
				return false
			}
		}
	}
	return true
}

func TestNotFiniteMatchesIsInfOrIsNaN(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		if got, want := notFinite(v), math.IsInf(v, 0) || math.IsNaN(v); got != want {
			t.Errorf("notFinite(%v) = %v, want %v", v, got, want)
		}
	}
}
