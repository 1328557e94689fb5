package holtwinters

import "testing"

func TestSpecString(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{}, "ets(A,N,N)"},
		{Spec{Trend: DampedTrend, Seasonality: Multiplicative, Periods: []int{24, 168}, AR1: true}, "ets(A,Ad,M)[24,168]+ar1"},
		{Spec{Trend: AdditiveTrend, Seasonality: Additive, Periods: []int{12}, BoxCox: Lambda(0)}, "log ets(A,A,A)[12]"},
		{Spec{Seasonality: Additive, Periods: []int{7}, BoxCox: Lambda(0.5), Update: Taylor}, "boxcox(0.5) ets(A,N,A)[7] taylor"},
		{Spec{Seasonality: None, Periods: []int{24}}, "ets(A,N,N)"},
	}
	for _, tc := range tests {
		if got := tc.spec.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// TestModelDoesNotAlias checks that a Model's accessors return copies and
// that it keeps no reference to the caller's slices.
func TestModelDoesNotAlias(t *testing.T) {
	y := synthDouble(24*6, 24, 48, 0.5, 13)
	periods := []int{24}
	m, err := Fit(y, Spec{Seasonality: Additive, Periods: periods})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := m.Forecast(5, 0.9)
	periods[0] = 3
	y[len(y)-1] = 1e9
	m.Params().Seasonal0[0][0] = 1e9
	m.Spec().Periods[0] = 5
	m.Fitted()[0] = 1e9
	after, _ := m.Forecast(5, 0.9)
	for k := range before.Mean {
		if before.Mean[k] != after.Mean[k] {
			t.Fatalf("forecast changed after mutating inputs/outputs: %v vs %v", before.Mean, after.Mean)
		}
	}
	if m.Spec().Periods[0] != 24 {
		t.Errorf("spec periods %v", m.Spec().Periods)
	}
}
