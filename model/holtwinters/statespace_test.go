package holtwinters

import "testing"

// innovationsFitted is an independent transcription of the innovations
// (error-correction) state-space form of Hyndman et al. (2008, Table 2.3,
// additive errors), extended to several seasonal periods as in Taylor
// (2003) and De Livera et al. (2011), with Taylor's AR(1) adjustment:
//
//	μ_t = l + φb + Σ sᵢ              or (l + φb)·Π sᵢ
//	ŷ_t = μ_t + ρ·e_{t−1},  e_t = y_t − μ_t
//	l  ← l + φb + α·e               or l + φb + α·e/Π sᵢ
//	b  ← φb + αβ·e                  or φb + αβ·e/Π sᵢ
//	sᵢ ← sᵢ + γᵢ·e                  or sᵢ + γᵢ·e/((l + φb)·Π_{j≠i} sⱼ)
//
// with the seasonal states kept as plain lag arrays, not ring buffers.
// It returns the one-step forecasts ŷ_t.
func innovationsFitted(y []float64, s Spec, p Params) []float64 {
	phi := 1.0
	if s.Trend == DampedTrend {
		phi = p.Phi
	}
	ar := 0.0
	if s.AR1 {
		ar = p.AR
	}
	mult := s.Seasonality == Multiplicative
	l, b, ePrev := p.Level0, p.Trend0, 0.0
	lags := make([][]float64, len(s.Periods)) // lags[i][t] is the index for observation t
	for i := range lags {
		lags[i] = append([]float64(nil), p.Seasonal0[i]...)
	}
	out := make([]float64, len(y))
	for t, v := range y {
		base := l + phi*b
		S := 0.0
		if mult {
			S = 1
		}
		cur := make([]float64, len(lags))
		for i := range lags {
			cur[i] = lags[i][t]
			if mult {
				S *= cur[i]
			} else {
				S += cur[i]
			}
		}
		mu := base + S
		if mult {
			mu = base * S
		}
		out[t] = mu + ar*ePrev
		e := v - mu
		scale := 1.0
		if mult {
			scale = S
		}
		l = base + p.Alpha*e/scale
		if s.Trend != NoTrend {
			b = phi*b + p.Alpha*p.Beta*e/scale
		}
		for i := range lags {
			next := cur[i] + p.Gamma[i]*e
			if mult {
				next = cur[i] + p.Gamma[i]*e/(base*S/cur[i])
			}
			lags[i] = append(lags[i], next)
		}
		ePrev = e
	}
	return out
}

// TestMultipleSeasonalMatchesInnovationsForm checks every trend ×
// seasonality form with two active seasonal periods (γ > 0 on both) and
// the AR(1) adjustment against innovationsFitted, to 1e-9 relative: no
// external tool fits these forms with fixed parameters, so the reference
// is the textbook recursion written out independently.
func TestMultipleSeasonalMatchesInnovationsForm(t *testing.T) {
	y := synthDouble(24*7*3, 24, 168, 0.5, 21)
	for _, season := range []Seasonality{Additive, Multiplicative} {
		for _, trend := range []Trend{NoTrend, AdditiveTrend, DampedTrend} {
			spec := Spec{Trend: trend, Seasonality: season, Periods: []int{24, 168}, AR1: true}
			t.Run(spec.String(), func(t *testing.T) {
				p := initialParams(y, spec)
				p.Alpha, p.Beta, p.Phi, p.AR = 0.25, 0.1, 0.9, 0.4
				if trend == AdditiveTrend {
					p.Phi = 1
				}
				p.Gamma[0], p.Gamma[1] = 0.2, 0.15
				m, err := FitWith(y, spec, p)
				if err != nil {
					t.Fatal(err)
				}
				want := innovationsFitted(y, spec, p)
				got := m.Fitted()
				if len(got) != len(y) || len(want) != len(y) {
					t.Fatalf("%d fitted values, reference %d, want %d", len(got), len(want), len(y))
				}
				for i := range want {
					if !relClose(got[i], want[i], 1e-9) {
						t.Fatalf("fitted[%d] = %.12g, innovations form %.12g", i, got[i], want[i])
					}
				}
			})
		}
	}
}
