package m4

import (
	"context"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/seasonal"
)

// TestAutoMeetsTheBar guards the documented accuracy figures of prewarm's
// default forecaster (with the hourly clock, auto.Config{Step: time.Hour})
// on all 414 M4 Hourly series, horizon 48, on both splits:
//
//   - holdout (the last 48 training points, OWA relative to Naive2 on the
//     same windows): OWA ≤ 0.43;
//   - official test (OWA relative to the published Naive2): OWA ≤ 0.42;
//   - both: MSIS ≤ 7.0 and 95% coverage within [0.93, 0.97].
//
// The same figures are printed by `forecaster eval m4 --split holdout`
// and `--split official`. About 20–30 s of CPU on 2 cores.
func TestAutoMeetsTheBar(t *testing.T) {
	if testing.Short() {
		t.Skip("scores all 414 series twice")
	}
	all, err := LoadHourly(hourlyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	f := auto.New(auto.Config{Step: time.Hour})
	opt := EvalOptions{Horizon: HourlyHorizon, Level: 0.95}
	for _, tc := range []struct {
		split  Split
		maxOWA float64
	}{
		{SplitHoldout, 0.43},
		{SplitOfficial, 0.42},
	} {
		t.Run(string(tc.split), func(t *testing.T) {
			series, err := tc.split.Apply(all, HourlyHorizon)
			if err != nil {
				t.Fatal(err)
			}
			unitS, unitM := accuracy.Naive2HourlySMAPE, accuracy.Naive2HourlyMASE
			if tc.split == SplitHoldout {
				n2, err := Evaluate(context.Background(), seasonal.Naive2{Period: HourlyPeriod}, series, opt)
				if err != nil {
					t.Fatal(err)
				}
				unitS, unitM = n2.Scores.SMAPE, n2.Scores.MASE
			}
			res, err := Evaluate(context.Background(), f, series, opt)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Scores
			owa := accuracy.OWA(s.SMAPE, s.MASE, unitS, unitM)
			t.Logf("auto on %d series, %s: sMAPE %.3f MASE %.3f OWA %.3f MSIS %.2f coverage %.3f (%.1f s)",
				res.Series, tc.split, s.SMAPE, s.MASE, owa, s.MSIS, s.Coverage, res.Elapsed.Seconds())
			if res.Series != 414 {
				t.Errorf("scored %d series, want 414", res.Series)
			}
			if owa > tc.maxOWA {
				t.Errorf("OWA %.3f > %.2f", owa, tc.maxOWA)
			}
			if s.MSIS > 7.0 {
				t.Errorf("MSIS %.2f > 7.0", s.MSIS)
			}
			if s.Coverage < 0.93 || s.Coverage > 0.97 {
				t.Errorf("coverage %.3f outside [0.93, 0.97]", s.Coverage)
			}
		})
	}
}
