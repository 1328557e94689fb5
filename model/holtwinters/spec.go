package holtwinters

import (
	"fmt"
	"strconv"
	"strings"
)

// Seasonality selects how the seasonal indices combine with the level.
type Seasonality int

const (
	// None fits no seasonal component; Spec.Periods is ignored.
	None Seasonality = iota
	// Additive seasonality adds the seasonal indices to the level:
	// μ = l + φb + s¹ + s² + ….
	Additive
	// Multiplicative seasonality scales the level by the indices:
	// μ = (l + φb)·s¹·s²·…. It needs a strictly positive series.
	Multiplicative
)

// String returns the ETS letter of the seasonal component: N, A or M.
func (s Seasonality) String() string {
	switch s {
	case None:
		return "N"
	case Additive:
		return "A"
	case Multiplicative:
		return "M"
	}
	return "Seasonality(" + strconv.Itoa(int(s)) + ")"
}

// Trend selects the trend component.
type Trend int

const (
	// NoTrend fits a level only.
	NoTrend Trend = iota
	// AdditiveTrend fits Holt's linear trend (φ = 1).
	AdditiveTrend
	// DampedTrend fits Gardner and McKenzie's damped trend (0 < φ < 1): the
	// h-step forecast adds (φ + φ² + … + φʰ)·b instead of h·b, so long
	// horizons flatten out.
	DampedTrend
)

// String returns the ETS letters of the trend component: N, A or Ad.
func (t Trend) String() string {
	switch t {
	case NoTrend:
		return "N"
	case AdditiveTrend:
		return "A"
	case DampedTrend:
		return "Ad"
	}
	return "Trend(" + strconv.Itoa(int(t)) + ")"
}

// Update selects the form of the seasonal recursion. Both forms are the
// same model for additive seasonality up to a change of γ (γ_EC = γ_T·(1−α));
// they differ slightly for multiplicative seasonality.
type Update int

const (
	// ErrorCorrection is the innovations (state-space) form of Hyndman et
	// al. (2008) used by statsmodels' ExponentialSmoothing and R's ets: the
	// seasonal index is updated with the one-step error relative to the
	// forecast level l_{t-1}+φb_{t-1}. It is the default.
	ErrorCorrection Update = iota
	// Taylor is the original Holt-Winters form of Winters (1960) and Taylor
	// (2003), used by R's HoltWinters and forecast::dshw: the seasonal index
	// is updated against the new level l_t.
	Taylor
)

// Spec names a member of the family: which components, which seasonal
// periods, and the optional AR(1) error adjustment and Box-Cox transform.
// The zero Spec is simple exponential smoothing, ETS(A,N,N).
type Spec struct {
	Trend       Trend
	Seasonality Seasonality
	// Periods lists the seasonal periods in observations, e.g. {24, 168}
	// for daily and weekly cycles on hourly data. Each must be at least 2
	// and they must be distinct. One period is classic Holt-Winters; two or
	// more is Taylor's multiple-seasonal Holt-Winters. Ignored when
	// Seasonality is None.
	Periods []int
	// AR1 adds Taylor's first-order autoregressive adjustment of the
	// one-step errors: ŷ_t = μ_t + ρ·e_{t-1}, where e is the model's error
	// without the adjustment.
	AR1 bool
	// BoxCox, when non-nil, fits the model to the Box-Cox transform of the
	// series with this λ (0 is the log) and maps forecasts and interval
	// bounds back; it needs a strictly positive series. Use Lambda to set
	// it.
	BoxCox *float64
	// Update is the form of the seasonal recursion (default
	// ErrorCorrection).
	Update Update
}

// Lambda returns a pointer to λ, for Spec.BoxCox.
func Lambda(lambda float64) *float64 { return &lambda }

// seasonal reports whether the spec has at least one seasonal component.
func (s Spec) seasonal() bool { return s.Seasonality != None && len(s.Periods) > 0 }

// periods returns the periods in effect (none when not seasonal).
func (s Spec) periods() []int {
	if !s.seasonal() {
		return nil
	}
	return s.Periods
}

// maxPeriod is the longest period in effect, or 1 without seasonality.
func (s Spec) maxPeriod() int {
	m := 1
	for _, p := range s.periods() {
		m = max(m, p)
	}
	return m
}

// String names the form in ETS notation with the periods, e.g.
// "ets(A,Ad,M)[24,168]+ar1", prefixed by the transform when there is one:
// "log ets(A,N,A)[24]" or "boxcox(0.5) ets(…)".
func (s Spec) String() string {
	var b strings.Builder
	if s.BoxCox != nil {
		if *s.BoxCox == 0 {
			b.WriteString("log ")
		} else {
			fmt.Fprintf(&b, "boxcox(%g) ", *s.BoxCox)
		}
	}
	fmt.Fprintf(&b, "ets(A,%v,%v)", s.Trend, s.Seasonality)
	if ps := s.periods(); len(ps) > 0 {
		b.WriteByte('[')
		for i, p := range ps {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
		b.WriteByte(']')
	}
	if s.AR1 {
		b.WriteString("+ar1")
	}
	if s.Update == Taylor {
		b.WriteString(" taylor")
	}
	return b.String()
}

// validate reports the first problem with the spec.
func (s Spec) validate() error {
	if s.Trend < NoTrend || s.Trend > DampedTrend {
		return fmt.Errorf("holtwinters: unknown trend %d", int(s.Trend))
	}
	if s.Seasonality < None || s.Seasonality > Multiplicative {
		return fmt.Errorf("holtwinters: unknown seasonality %d", int(s.Seasonality))
	}
	if s.Update != ErrorCorrection && s.Update != Taylor {
		return fmt.Errorf("holtwinters: unknown update form %d", int(s.Update))
	}
	if s.Seasonality != None && len(s.Periods) == 0 {
		return fmt.Errorf("holtwinters: %v seasonality needs at least one period", s.Seasonality)
	}
	if len(s.periods()) > maxPeriods {
		return fmt.Errorf("holtwinters: %d seasonal periods, at most %d supported", len(s.Periods), maxPeriods)
	}
	seen := make(map[int]bool, len(s.Periods))
	for _, p := range s.periods() {
		if p < 2 {
			return fmt.Errorf("holtwinters: seasonal period %d must be at least 2", p)
		}
		if seen[p] {
			return fmt.Errorf("holtwinters: seasonal period %d given twice", p)
		}
		seen[p] = true
	}
	if s.BoxCox != nil && (isNaNOrInf(*s.BoxCox) || *s.BoxCox < -2 || *s.BoxCox > 2) {
		return fmt.Errorf("holtwinters: Box-Cox lambda %v outside [-2, 2]", *s.BoxCox)
	}
	return nil
}

// Params holds a model's parameters and initial states, in the
// Holt-Winters component form (see the package documentation).
type Params struct {
	// Alpha smooths the level, 0 < α < 1.
	Alpha float64
	// Beta smooths the trend, 0 < β < 1 (the ETS β* is α·β). Ignored
	// without a trend.
	Beta float64
	// Phi damps the trend, 0 < φ ≤ 1; it is 1 for AdditiveTrend. Ignored
	// without a trend.
	Phi float64
	// Gamma smooths the seasonal indices, one per period, 0 ≤ γ < 1 − α.
	Gamma []float64
	// AR is the AR(1) coefficient ρ of the error adjustment, |ρ| < 1; 0
	// without Spec.AR1.
	AR float64
	// Level0 and Trend0 are the level and trend before the first
	// observation (l₀, b₀).
	Level0, Trend0 float64
	// Seasonal0[i] holds the Periods[i] seasonal indices before the first
	// observation in time order: Seasonal0[i][j] is the index that applies
	// to observation j (j < Periods[i]).
	Seasonal0 [][]float64
}

// clone returns a deep copy.
func (p Params) clone() Params {
	q := p
	q.Gamma = append([]float64(nil), p.Gamma...)
	q.Seasonal0 = make([][]float64, len(p.Seasonal0))
	for i, s := range p.Seasonal0 {
		q.Seasonal0[i] = append([]float64(nil), s...)
	}
	return q
}

// validateFor checks that p fits spec's shape and lies in the model's
// parameter space.
func (p Params) validateFor(s Spec) error {
	ps := s.periods()
	if len(p.Gamma) != len(ps) {
		return fmt.Errorf("holtwinters: %d gamma values for %d periods", len(p.Gamma), len(ps))
	}
	if len(p.Seasonal0) != len(ps) {
		return fmt.Errorf("holtwinters: %d initial seasonal vectors for %d periods", len(p.Seasonal0), len(ps))
	}
	for i, m := range ps {
		if len(p.Seasonal0[i]) != m {
			return fmt.Errorf("holtwinters: Seasonal0[%d] has %d values, want %d", i, len(p.Seasonal0[i]), m)
		}
		for j, v := range p.Seasonal0[i] {
			if isNaNOrInf(v) {
				return fmt.Errorf("holtwinters: Seasonal0[%d][%d] is %v", i, j, v)
			}
		}
	}
	check := func(name string, v, lo, hi float64) error {
		if isNaNOrInf(v) || v < lo || v > hi {
			return fmt.Errorf("holtwinters: %s = %v outside [%v, %v]", name, v, lo, hi)
		}
		return nil
	}
	if err := check("alpha", p.Alpha, 0, 1); err != nil {
		return err
	}
	if s.Trend != NoTrend {
		if err := check("beta", p.Beta, 0, 1); err != nil {
			return err
		}
		if err := check("phi", p.Phi, 0, 1); err != nil {
			return err
		}
	}
	for i, g := range p.Gamma {
		if err := check("gamma["+strconv.Itoa(i)+"]", g, 0, 1); err != nil {
			return err
		}
	}
	if err := check("ar", p.AR, -1, 1); err != nil {
		return err
	}
	if isNaNOrInf(p.Level0) || isNaNOrInf(p.Trend0) {
		return fmt.Errorf("holtwinters: initial level %v or trend %v is not finite", p.Level0, p.Trend0)
	}
	return nil
}
