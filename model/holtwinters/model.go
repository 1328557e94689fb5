package holtwinters

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// ErrTooShort reports a history too short for the requested form: the
// initialisation needs two full cycles of the longest period (three
// observations without seasonality).
var ErrTooShort = errors.New("holtwinters: history too short for the model")

// ErrNotPositive reports a multiplicative or Box-Cox model asked of a
// series with zero or negative values.
var ErrNotPositive = errors.New("holtwinters: model needs a strictly positive series")

// Model is a fitted member of the family: its form, parameters, one-step
// fitted values and the state at the end of the history, from which it
// forecasts. A Model is immutable and safe for concurrent use.
type Model struct {
	spec   Spec
	params Params
	rec    recursion

	fitted []float64 // one-step forecasts, original scale
	resid  []float64 // one-step errors on the model scale, NaN where y is
	final  *state    // state after the last observation

	nObs     int       // finite observations
	sse      float64   // on the model scale
	sigma2   float64   // innovation variance used for intervals
	stepMSE  []float64 // in-sample mean squared j-step error, j = 1..len
	nFree    int       // estimated smoothing parameters
	nFitted  int       // initial states estimated by least squares
	logLik   float64
	aicc     float64
	jacobian float64         // log-Jacobian of the transform, Σ(λ−1)·log y
	status   optimize.Status // of the parameter search; NotTerminated for FitWith
	evals    int             // criterion evaluations of the search
}

// Spec returns the model's form.
func (m *Model) Spec() Spec { return cloneSpec(m.spec) }

// Params returns a copy of the parameters and initial states.
func (m *Model) Params() Params { return m.params.clone() }

// Fitted returns the one-step-ahead forecasts of the history on the
// original scale: Fitted()[t] is the forecast of y[t] made at t−1.
func (m *Model) Fitted() []float64 { return append([]float64(nil), m.fitted...) }

// Residuals returns the one-step errors on the model (transformed) scale,
// NaN where the history is missing. They are the innovations whose
// variance sizes the prediction intervals.
func (m *Model) Residuals() []float64 { return append([]float64(nil), m.resid...) }

// SSE is the sum of squared one-step errors on the model scale.
func (m *Model) SSE() float64 { return m.sse }

// Sigma2 is the innovation variance used for prediction intervals:
// SSE/(n − p), n finite observations, p the estimated smoothing parameters
// and least-squares initial states.
func (m *Model) Sigma2() float64 { return m.sigma2 }

// LogLik is the Gaussian log-likelihood of the history at the MLE of the
// variance, SSE/n, including the Box-Cox Jacobian so that it compares
// across transforms.
func (m *Model) LogLik() float64 { return m.logLik }

// NumParams is the number of estimated quantities the information criterion
// charges for: smoothing, damping and AR parameters, the initial level,
// trend and seasonal indices (m−1 free per period) and the variance.
func (m *Model) NumParams() int { return m.nFree + m.nStates() + 1 }

// AICc is Akaike's criterion with the small-sample correction,
// −2·LogLik + 2k + 2k(k+1)/(n−k−1) with k = NumParams; +Inf when n ≤ k+1.
func (m *Model) AICc() float64 { return m.aicc }

// Converged reports whether the parameter search stopped because it
// converged (the criterion stopped improving by more than 1e-5 relative,
// or Nelder-Mead's simplex collapsed) rather than by exhausting its budget
// of 400 evaluations per parameter, in which case the best point found is
// used. A model from FitWith, which estimates nothing, reports true.
func (m *Model) Converged() bool {
	switch m.status {
	case optimize.NotTerminated, optimize.FunctionConvergence, optimize.MethodConverge:
		return true
	}
	return false
}

// Evaluations is how many times the parameter search evaluated its
// criterion (0 for FitWith).
func (m *Model) Evaluations() int { return m.evals }

// String names the model, e.g. "ets(A,Ad,M)[24,168]+ar1".
func (m *Model) String() string { return m.spec.String() }

func (m *Model) nStates() int {
	k := 1
	if m.spec.Trend != NoTrend {
		k++
	}
	for _, p := range m.spec.periods() {
		k += p - 1
	}
	return k
}

// finish runs the recursion over the model-scale series z with m.params
// and fills in the fitted values, residuals, final state and criteria,
// and with stepErrors the in-sample multi-step errors.
func (m *Model) finish(z []float64, stepErrors bool) {
	m.rec = newRecursion(m.spec, m.params)
	st := newState(m.params, m.rec.nSeasonal)
	n := len(z)
	m.fitted = make([]float64, n)
	m.resid = make([]float64, n)
	var sse float64
	for t, v := range z {
		yhat, innov := m.rec.step(st, v)
		m.fitted[t] = yhat
		if math.IsNaN(v) {
			m.resid[t] = math.NaN()
			continue
		}
		m.resid[t] = innov
		sse += innov * innov
		m.nObs++
	}
	m.final = st
	m.sse = sse
	for t := range m.fitted {
		m.fitted[t] = m.invert(m.fitted[t])
	}
	nf := float64(m.nObs)
	// Degrees of freedom: in-sample errors understate out-of-sample ones
	// by about n/(n−p), p the number of estimated quantities.
	dof := nf / math.Max(nf-float64(m.nFree+m.nFitted), 1)
	m.sigma2 = dof * sse / nf
	if stepErrors {
		m.stepMSE = m.empiricalMSE(z)
		for j := range m.stepMSE {
			m.stepMSE[j] *= dof
		}
	}
	m.logLik = -0.5*nf*(math.Log(2*math.Pi*sse/nf)+1) + m.jacobian
	k := float64(m.NumParams())
	if nf-k-1 > 0 {
		m.aicc = -2*m.logLik + 2*k + 2*k*(k+1)/(nf-k-1)
	} else {
		m.aicc = math.Inf(1)
	}
}

// empiricalHorizons is how many horizons the in-sample multi-step errors
// cover: the shortest period up to 48 (24 without seasonality), and at
// most a quarter of the history.
func (m *Model) empiricalHorizons(n int) int {
	k := 24
	if ps := m.spec.periods(); len(ps) > 0 {
		k = 48
		for _, p := range ps {
			k = min(k, p)
		}
	}
	return max(min(k, n/4), 1)
}

// empiricalMSE runs the recursion over z once more and returns the
// in-sample mean squared j-step-ahead error for j = 1..empiricalHorizons.
// The first value is the one-step MSE scaled to sigma2's degrees of
// freedom.
func (m *Model) empiricalMSE(z []float64) []float64 {
	st := newState(m.params, m.rec.nSeasonal)
	ms := newMultiStep(m.empiricalHorizons(len(z)), st)
	m.rec.amse(st, z, ms)
	out := make([]float64, ms.k)
	for j := range out {
		out[j] = math.NaN()
		if c := ms.counts[j+1]; c > 0 {
			out[j] = ms.sumSq[j+1] / float64(c)
		}
	}
	return out
}

func cloneSpec(s Spec) Spec {
	s.Periods = append([]int(nil), s.Periods...)
	if s.BoxCox != nil {
		s.BoxCox = Lambda(*s.BoxCox)
	}
	return s
}
