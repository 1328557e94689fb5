package holtwinters

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// FitWith runs the model with fixed parameters and initial states over y
// (NaN marks a missing observation) without estimating anything; it is
// how reference implementations are reproduced. p must match spec: one
// Gamma and one Seasonal0 vector per period.
func FitWith(y []float64, spec Spec, p Params) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if err := p.validateFor(spec); err != nil {
		return nil, err
	}
	z, jac, err := prepare(y, spec)
	if err != nil {
		return nil, err
	}
	m := &Model{spec: cloneSpec(spec), params: p.clone(), jacobian: jac}
	m.finish(z, true)
	return m, nil
}

// Fit estimates the parameters of spec from y (oldest first, NaN for a
// missing observation). Initial states come from a decomposition of the
// first cycles (see initialParams); the smoothing parameters α, β, φ, γᵢ
// and the AR coefficient ρ minimise the one-step sum of squared errors
// (the Gaussian likelihood) with Nelder-Mead inside the admissible region
// α ∈ [1e-4, 0.9999], β ∈ [1e-4, 0.9999], φ ∈ [0.8, 0.98],
// γᵢ ∈ [0, 0.9999·(1−α)] (Taylor form: [0, 0.9999]), ρ ∈ [−0.99, 0.99],
// which holds by construction: the search runs on logit-scaled values.
// When history length × states² is at most 2e6 (one period of up to about
// 45 on 1000 points), the initial states are then re-estimated by least
// squares and the parameters searched again, alternating while the
// criterion improves, so that the initial states are estimated as by
// statsmodels and ets.
//
// The search stops when the criterion improves by less than 1e-5
// relative over 5 iterations per parameter, or after 400 evaluations per
// parameter; Model.Converged says which. Failures of the optimiser other
// than the evaluation limit, and a search that finds no finite criterion,
// are errors.
//
// It fails with ErrTooShort when y has fewer than two cycles of the
// longest period and ErrNotPositive when a multiplicative or Box-Cox form
// meets a value ≤ 0.
func Fit(y []float64, spec Spec) (*Model, error) { return FitOptions{}.Fit(y, spec) }

// FitOptions tunes estimation. The zero value is Fit's default.
type FitOptions struct {
	// Horizon, when above 1, estimates the parameters by the mean over
	// horizons j = 1..Horizon of the in-sample mean squared j-step error
	// (R ets' "amse" criterion) instead of the one-step SSE. It is capped
	// at the shortest seasonal period, and about 8 horizons spread over
	// 1..Horizon are scored. Multi-step estimation trades a little
	// one-step fit for forecasts that hold up over the horizon: on M4
	// Hourly it turns the one-step estimates' OWA of 0.859 into 0.476 (see
	// TestM4HourlySample).
	Horizon int
	// Start, when non-nil, is where the parameter search starts (only
	// Alpha, Beta, Phi, Gamma and AR are read), e.g. the parameters of a
	// previous fit: a warm start saves evaluations.
	Start *Params
	// Tolerance is the relative improvement of the criterion below which
	// the search counts as converged (over 5 iterations per parameter);
	// 0 means 1e-5. A looser one (1e-3) costs about half the evaluations
	// and suits a fit that is only compared with other candidates on
	// held-out errors, as model/auto's are.
	Tolerance float64
	// ScoredHorizons is about how many horizons, evenly spread over
	// 1..Horizon, the multi-step criterion scores; 0 means 8. Fewer cost
	// less: the criterion's time is about proportional to 1 + this.
	ScoredHorizons int
	// StallIterations is how many iterations per parameter the search
	// may go without improving the criterion by Tolerance before it
	// counts as converged; 0 means 5, at most 100. Fewer stop sooner
	// after the search has settled (3 costs about 15% less than 5).
	StallIterations int
	// PointOnly skips what only the model's own prediction intervals use,
	// the in-sample mean squared j-step errors (a run of the multi-step
	// criterion over up to 48 horizons): for fits used for point forecasts
	// alone, as model/auto's candidates are. Forecast's interval then
	// comes from the model's variance alone.
	PointOnly bool
	// KeepInitial skips the least-squares refinement of the initial
	// states (and the second search it entails), keeping those of the
	// decomposition of the first cycles: about half the cost of a fit,
	// at some in-sample accuracy.
	KeepInitial bool
}

// Fit estimates spec's parameters from y as the package-level Fit does,
// with these options.
func (o FitOptions) Fit(y []float64, spec Spec) (*Model, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	z, jac, err := prepare(y, spec)
	if err != nil {
		return nil, err
	}
	f := newFitter(z, spec, o)
	res, err := minimize(f.criterion, f.bounds.toFree(f.p), f.conv)
	if err != nil {
		return nil, fmt.Errorf("holtwinters: fitting %v: %w", spec, err)
	}
	f.bounds.fromFree(res.X, &f.p)
	evals, nFitted := res.FuncEvaluations, 0
	if !o.KeepInitial {
		res, evals, nFitted = f.refine(res)
	}
	m := &Model{
		spec: cloneSpec(spec), params: f.p, jacobian: jac,
		status: res.Status, evals: evals,
		nFree: len(res.X), nFitted: nFitted,
	}
	m.finish(z, !o.PointOnly)
	return m, nil
}

// fitter is the scratch space of one estimation.
type fitter struct {
	spec   Spec
	z      []float64 // the series on the model scale
	bounds bounds
	start  Params     // the initial states the criterion runs from
	p      Params     // working parameters, updated in place
	rec    recursion  // shares p.Gamma
	st     *state     // reset to start for every evaluation
	ms     *multiStep // nil for the one-step criterion
	conv   convergence
}

// convergence is when a parameter search stops: after stall iterations
// per parameter in a row that improve the criterion by less than tol
// relative.
type convergence struct {
	tol   float64
	stall int
}

func newFitter(z []float64, spec Spec, o FitOptions) *fitter {
	start := initialParams(z, spec)
	if o.Start != nil {
		start.Alpha, start.Beta, start.Phi, start.AR = o.Start.Alpha, o.Start.Beta, o.Start.Phi, o.Start.AR
		if len(o.Start.Gamma) == len(start.Gamma) {
			copy(start.Gamma, o.Start.Gamma)
		}
	}
	f := &fitter{spec: spec, z: z, bounds: newBounds(spec), start: start, p: start.clone(),
		conv: convergence{tol: o.Tolerance, stall: o.StallIterations}}
	if !(f.conv.tol > 0 && f.conv.tol < 1) {
		f.conv.tol = convRel
	}
	if f.conv.stall <= 0 || f.conv.stall > 100 {
		f.conv.stall = convIter
	}
	f.rec = newRecursion(spec, f.p)
	f.st = newState(start, f.rec.nSeasonal)
	horizon := o.Horizon
	for _, m := range spec.periods() {
		horizon = min(horizon, m)
	}
	if horizon > 1 {
		f.ms = newMultiStep(horizon, f.st)
		scored := o.ScoredHorizons
		if scored <= 0 {
			scored = scoredHorizons
		}
		f.ms.stride = (horizon + scored - 1) / scored
	}
	return f
}

// criterion is the objective of the search at the free vector x: the
// one-step SSE or the multi-step mean squared error.
func (f *fitter) criterion(x []float64) float64 {
	f.bounds.fromFree(x, &f.p)
	f.rec = newRecursionInto(f.rec, f.spec, f.p)
	f.st.reset(f.start)
	if f.ms != nil {
		return f.rec.amse(f.st, f.z, f.ms)
	}
	return f.rec.sse(f.st, f.z)
}

// refine alternates least-squares initial states for the parameters found
// with a new parameter search from there, while the criterion improves
// (refineInitial declines models with many states). The initial states
// minimise the one-step SSE, so with the multi-step criterion a round can
// end worse than it started; the best round's parameters and states are
// kept in f.p. It returns that round's search result, the evaluations
// spent in all, and how many initial states were estimated.
func (f *fitter) refine(res *optimize.Result) (last *optimize.Result, evals, nFitted int) {
	evals = res.FuncEvaluations
	best, bestP, bestFitted := res, f.p.clone(), 0
	for range refineRounds {
		f.rec = newRecursionInto(f.rec, f.spec, f.p)
		if sse := refineInitial(f.rec, f.spec, &f.p, f.z); math.IsNaN(sse) {
			break
		}
		nFitted = len(stateVector(f.spec, f.p))
		f.start = f.p.clone()
		next, err := minimize(f.criterion, res.X, f.conv)
		if err != nil {
			break
		}
		evals += next.FuncEvaluations
		f.bounds.fromFree(next.X, &f.p)
		improved := next.F < best.F*(1-1e-4)
		if next.F < best.F {
			best, bestP, bestFitted = next, f.p.clone(), nFitted
		}
		res = next
		if !improved {
			break
		}
	}
	f.p = bestP
	return best, evals, bestFitted
}

// minimize runs Nelder-Mead on obj from x0 until conv says it has
// converged. Running out of evaluations is accepted (the best point so
// far is used); other failures and a non-finite optimum are errors.
func minimize(obj func([]float64) float64, x0 []float64, conv convergence) (*optimize.Result, error) {
	settings := &optimize.Settings{
		Converger: &optimize.FunctionConverge{
			Relative:   conv.tol,
			Iterations: conv.stall * len(x0),
		},
		FuncEvaluations: 400 * len(x0),
	}
	res, err := optimize.Minimize(optimize.Problem{Func: obj}, x0, settings, &optimize.NelderMead{})
	switch {
	case res == nil:
		return nil, err
	case err != nil && res.Status != optimize.FunctionEvaluationLimit:
		return nil, err
	case math.IsInf(res.F, 0) || math.IsNaN(res.F):
		return nil, errors.New("no admissible parameters give a finite error")
	}
	return res, nil
}

// newRecursionInto refreshes r's parameters from p without allocating.
func newRecursionInto(r recursion, s Spec, p Params) recursion {
	r.alpha, r.beta = p.Alpha, p.Beta
	if s.Trend == DampedTrend {
		r.phi = p.Phi
	}
	if s.AR1 {
		r.ar = p.AR
	}
	return r
}

// prepare checks y against spec and returns it on the model scale with the
// transform's log-Jacobian; without a transform z is y itself, and no
// caller writes to it.
func prepare(y []float64, spec Spec) (z []float64, jac float64, err error) {
	finite := 0
	for i, v := range y {
		if math.IsInf(v, 0) {
			return nil, 0, fmt.Errorf("holtwinters: y[%d] is %v", i, v)
		}
		if math.IsNaN(v) {
			continue
		}
		finite++
		if (spec.Seasonality == Multiplicative && spec.seasonal() || spec.BoxCox != nil) && v <= 0 {
			return nil, 0, fmt.Errorf("%w: y[%d] = %v", ErrNotPositive, i, v)
		}
	}
	if finite == 0 {
		return nil, 0, errors.New("holtwinters: history has no finite observation")
	}
	need := 3
	if spec.seasonal() {
		need = 2 * spec.maxPeriod()
	}
	if len(y) < need || finite < max(need/2, 3) {
		return nil, 0, fmt.Errorf("%w: %d observations (%d finite), %v needs %d", ErrTooShort, len(y), finite, spec, need)
	}
	if spec.BoxCox == nil {
		return y, 0, nil // read only, like y
	}
	lambda := *spec.BoxCox
	z = make([]float64, len(y))
	for i, v := range y {
		z[i] = boxCox(v, lambda)
		if !math.IsNaN(v) {
			jac += (lambda - 1) * math.Log(v)
		}
	}
	return z, jac, nil
}

// Convergence of the parameter search by default: stop when convIter·dim
// iterations in a row improve the criterion by less than convRel relative.
const convRel, convIter = 1e-5, 5

// scoredHorizons is about how many horizons the multi-step criterion
// scores: every ⌈H/8⌉-th (1, 4, 7, … for H = 24). On M4 Hourly this costs
// a third of scoring all 24 and changes sMAPE and MASE by under 0.5%.
const scoredHorizons = 8

// refineRounds bounds the alternation of initial-state refinement and
// parameter search.
const refineRounds = 4
