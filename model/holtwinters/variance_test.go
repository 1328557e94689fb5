package holtwinters

import (
	"math"
	"strings"
	"testing"
)

// TestImpulseMatchesClassOneFormula checks the forecast-error weights ψ_j
// of the linear forms against Hyndman et al. (2008, Table 6.1, class 1):
// ψ_j = α + αβ·(φ + … + φ^j) + γ·1{j mod m = 0} for ETS(A,Ad,A) in
// component form (β* = αβ), and the AR(1) form against ψ from its own
// definition (e_t = ρe_{t−1} + ε_t feeding the states).
func TestImpulseMatchesClassOneFormula(t *testing.T) {
	y := synthDouble(24*10, 12, 24, 0.5, 9)
	const m = 12
	tests := []struct {
		name string
		spec Spec
		p    Params
	}{
		{"ANN", Spec{}, Params{Alpha: 0.3, Level0: 10}},
		{"AAN", Spec{Trend: AdditiveTrend}, Params{Alpha: 0.3, Beta: 0.2, Phi: 1, Level0: 10}},
		{"AAdN", Spec{Trend: DampedTrend}, Params{Alpha: 0.3, Beta: 0.2, Phi: 0.9, Level0: 10}},
		{"AAdA", Spec{Trend: DampedTrend, Seasonality: Additive, Periods: []int{m}},
			Params{Alpha: 0.3, Beta: 0.2, Phi: 0.9, Gamma: []float64{0.25}, Level0: 10, Seasonal0: [][]float64{sinIndices(m, 1, 0)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mod, err := FitWith(y, tc.spec, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			const h = 30
			mean := make([]float64, h)
			st := mod.final.clone()
			for k := range mean {
				mean[k], _ = mod.rec.step(st, math.NaN())
			}
			psi := mod.impulse(mean)
			phi := 1.0
			if tc.spec.Trend == DampedTrend {
				phi = tc.p.Phi
			}
			for j := 1; j < h; j++ {
				want := tc.p.Alpha
				if tc.spec.Trend != NoTrend {
					var phiSum float64
					for i, pw := 1, phi; i <= j; i, pw = i+1, pw*phi {
						phiSum += pw
					}
					want += tc.p.Alpha * tc.p.Beta * phiSum
				}
				if tc.spec.seasonal() && j%m == 0 {
					want += tc.p.Gamma[0]
				}
				if !relClose(psi[j], want, 1e-6) {
					t.Fatalf("ψ_%d = %.9g, class-1 formula %.9g", j, psi[j], want)
				}
			}
		})
	}
}

// TestForecastVarianceWithoutEmpirical checks Model.Forecast's interval
// for ETS(A,N,N) against σ²(1 + (k−1)α²) when no in-sample multi-step
// errors are available.
func TestForecastVarianceWithoutEmpirical(t *testing.T) {
	y := synthDouble(200, 12, 24, 0.5, 10)
	mod, err := FitWith(y, Spec{}, Params{Alpha: 0.4, Level0: 10})
	if err != nil {
		t.Fatal(err)
	}
	mod.stepMSE = nil
	fc, err := mod.Forecast(10, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	const z = 1.959963984540054
	for k := range fc.Mean {
		sd := math.Sqrt(mod.Sigma2() * (1 + float64(k)*0.4*0.4))
		if !relClose(fc.Upper[k]-fc.Mean[k], z*sd, 1e-6) || !relClose(fc.Mean[k]-fc.Lower[k], z*sd, 1e-6) {
			t.Fatalf("step %d: half-widths %v, %v, want %v", k+1, fc.Upper[k]-fc.Mean[k], fc.Mean[k]-fc.Lower[k], z*sd)
		}
	}
}

func TestFitWithRejectsBadInput(t *testing.T) {
	y := synthDouble(100, 12, 24, 0.5, 11)
	seas := Spec{Seasonality: Additive, Periods: []int{12}}
	good := Params{Alpha: 0.3, Gamma: []float64{0.1}, Level0: 10, Seasonal0: [][]float64{make([]float64, 12)}}
	with := func(f func(*Params)) Params {
		p := good.clone()
		f(&p)
		return p
	}
	tests := []struct {
		name    string
		y       []float64
		spec    Spec
		p       Params
		wantErr string
	}{
		{"period 1", y, Spec{Seasonality: Additive, Periods: []int{1}}, good, "at least 2"},
		{"repeated period", y, Spec{Seasonality: Additive, Periods: []int{12, 12}}, good, "twice"},
		{"too many periods", y, Spec{Seasonality: Additive, Periods: []int{2, 3, 4, 5, 6}}, good, "at most"},
		{"seasonal without period", y, Spec{Seasonality: Multiplicative}, good, "needs at least one period"},
		{"unknown trend", y, Spec{Trend: 7}, good, "unknown trend"},
		{"lambda out of range", y, Spec{BoxCox: Lambda(5)}, good, "Box-Cox"},
		{"alpha above 1", y, seas, with(func(p *Params) { p.Alpha = 1.5 }), "alpha"},
		{"gamma NaN", y, seas, with(func(p *Params) { p.Gamma[0] = math.NaN() }), "gamma"},
		{"wrong gamma count", y, seas, with(func(p *Params) { p.Gamma = nil }), "gamma values"},
		{"short seasonal vector", y, seas, with(func(p *Params) { p.Seasonal0[0] = p.Seasonal0[0][:5] }), "Seasonal0[0] has 5"},
		{"infinite level", y, seas, with(func(p *Params) { p.Level0 = math.Inf(1) }), "not finite"},
		{"infinite observation", []float64{1, 2, math.Inf(-1)}, Spec{}, Params{Alpha: 0.5}, "y[2]"},
		{"too short", y[:20], seas, good, "too short"},
		{"log of zero", append([]float64{0}, y...), Spec{BoxCox: Lambda(0)}, Params{Alpha: 0.5}, "strictly positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitWith(tc.y, tc.spec, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if _, err := Fit(tc.y, tc.spec); err == nil && tc.spec.validate() != nil {
				t.Fatalf("Fit accepted the invalid spec")
			}
		})
	}
}

// TestMissingValuesAreCoasted checks that a NaN observation leaves the
// states where the forecast takes them: the fit of a series with a gap
// equals the fit of the series with the gap filled by its one-step
// forecast, and the gap adds nothing to the SSE.
func TestMissingValuesAreCoasted(t *testing.T) {
	y := synthDouble(24*8, 24, 48, 0.5, 12)
	spec := Spec{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{24, 48}, AR1: true}
	p := initialParams(y, spec)
	p.Alpha, p.Beta, p.Gamma[0], p.Gamma[1], p.AR = 0.2, 0.1, 0.1, 0.05, 0.4
	gappy := append([]float64(nil), y...)
	for _, i := range []int{30, 31, 32, 100, len(y) - 1} {
		gappy[i] = math.NaN()
	}
	mg, err := FitWith(gappy, spec, p)
	if err != nil {
		t.Fatal(err)
	}
	filled := append([]float64(nil), gappy...)
	fitted := mg.Fitted()
	for i, v := range gappy {
		if math.IsNaN(v) {
			filled[i] = fitted[i]
		}
	}
	mf, err := FitWith(filled, spec, p)
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(mg.SSE(), mf.SSE(), 1e-9) {
		t.Errorf("SSE with gaps %v, with gaps filled %v", mg.SSE(), mf.SSE())
	}
	fg, _ := mg.Forecast(24, 0.9)
	ff, _ := mf.Forecast(24, 0.9)
	for k := range fg.Mean {
		if !relClose(fg.Mean[k], ff.Mean[k], 1e-9) {
			t.Fatalf("forecast %d: %v with gaps, %v filled", k+1, fg.Mean[k], ff.Mean[k])
		}
	}
	if r := mg.Residuals(); !math.IsNaN(r[30]) || math.IsNaN(r[29]) {
		t.Errorf("residuals at gap %v, before %v; want NaN, finite", r[30], r[29])
	}
}
