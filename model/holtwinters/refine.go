package holtwinters

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// maxRefineWork bounds the cost of refineInitial: observations × states².
// Above it (e.g. per-minute data with daily and weekly periods) the
// decomposition's initial states are kept.
const maxRefineWork = 2e6

// stateVector flattens p's free initial states: l₀ (only without
// seasonality), b₀ (with a trend), then every seasonal index. With
// seasonality l₀ stays fixed: shifting it (additive) or scaling it
// (multiplicative) against all the indices leaves every forecast
// unchanged, so it is not identified.
func stateVector(s Spec, p Params) []float64 {
	var x []float64
	if !s.seasonal() {
		x = append(x, p.Level0)
	}
	if s.Trend != NoTrend {
		x = append(x, p.Trend0)
	}
	for _, idx := range p.Seasonal0 {
		x = append(x, idx...)
	}
	return x
}

// setStateVector is the inverse of stateVector.
func setStateVector(s Spec, p *Params, x []float64) {
	k := 0
	if !s.seasonal() {
		p.Level0 = x[0]
		k++
	}
	if s.Trend != NoTrend {
		p.Trend0 = x[k]
		k++
	}
	for _, idx := range p.Seasonal0 {
		k += copy(idx, x[k:])
	}
}

// refineInitial improves p's initial states for fixed smoothing
// parameters by Gauss-Newton on the one-step errors: the errors are
// affine in the initial states for the linear forms, so one step is the
// exact least-squares solution, and nearly so for multiplicative
// seasonality, where a step is kept only if it lowers the SSE. A small
// ridge towards the current states resolves the level/seasonal
// collinearity (adding c to l₀ and −c to every additive index changes
// nothing). It returns the SSE at the states it leaves in p.
func refineInitial(rec recursion, s Spec, p *Params, z []float64) float64 {
	x := stateVector(s, *p)
	k := len(x)
	n := len(z)
	if float64(n)*float64(k)*float64(k) > maxRefineWork {
		return math.NaN()
	}
	st := newState(*p, rec.nSeasonal)
	resid := func(q Params, out []float64) float64 {
		st.reset(q)
		var sse float64
		for t, v := range z {
			_, e := rec.step(st, v)
			out[t] = e
			sse += e * e
		}
		return sse
	}
	e0 := make([]float64, n)
	best := resid(*p, e0)
	if math.IsInf(best, 0) || math.IsNaN(best) {
		return best
	}
	q := p.clone()
	jac := mat.NewDense(n, k, nil)
	col := make([]float64, n)
	xq := make([]float64, k)
	for iter := 0; iter < 6; iter++ {
		// Columns by forward differences: ∂e_t/∂x_j.
		for j := range k {
			h := 1e-4 * math.Max(math.Abs(x[j]), 1e-2*math.Max(math.Abs(p.Level0), 1))
			copy(xq, x)
			xq[j] += h
			setStateVector(s, &q, xq)
			resid(q, col)
			for t := range n {
				jac.Set(t, j, (col[t]-e0[t])/h)
			}
		}
		var jtj mat.SymDense
		jtj.SymOuterK(1, jac.T())
		var tr float64
		for j := range k {
			tr += jtj.At(j, j)
		}
		ridge := 1e-9*tr/float64(k) + 1e-12
		for j := range k {
			jtj.SetSym(j, j, jtj.At(j, j)+ridge)
		}
		var jte mat.VecDense
		jte.MulVec(jac.T(), mat.NewVecDense(n, e0))
		var chol mat.Cholesky
		if !chol.Factorize(&jtj) {
			break
		}
		var step mat.VecDense
		if err := chol.SolveVecTo(&step, &jte); err != nil {
			break
		}
		prev := best
		for scale := 1.0; scale > 1e-3; scale /= 4 {
			for j := range k {
				xq[j] = x[j] - scale*step.AtVec(j)
			}
			setStateVector(s, &q, xq)
			if sse := resid(q, col); sse < best {
				best = sse
				copy(x, xq)
				copy(e0, col)
				break
			}
		}
		if best > prev*(1-1e-6) || s.Seasonality != Multiplicative {
			break
		}
	}
	setStateVector(s, p, x)
	return best
}
