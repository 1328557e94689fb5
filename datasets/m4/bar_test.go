package m4

import (
	"context"
	"testing"

	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/auto"
)

// TestAutoMeetsTheBar guards issue 2's acceptance figures for prewarm's
// default forecaster on all 414 M4 Hourly series: OWA ≤ 0.60, MSIS ≤ 9.0,
// and 95% interval coverage within [0.93, 0.97]. The same figures are
// printed by `forecaster eval m4`. About 15–30 s of CPU on 2 cores.
func TestAutoMeetsTheBar(t *testing.T) {
	if testing.Short() {
		t.Skip("scores all 414 series")
	}
	series, err := LoadHourly(hourlyDir(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(context.Background(), auto.New(auto.Config{}), series, EvalOptions{Horizon: 48, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Scores
	owa := accuracy.OWA(s.SMAPE, s.MASE, accuracy.Naive2HourlySMAPE, accuracy.Naive2HourlyMASE)
	t.Logf("auto on %d series: sMAPE %.3f MASE %.3f OWA %.3f MSIS %.2f coverage %.3f", res.Series, s.SMAPE, s.MASE, owa, s.MSIS, s.Coverage)
	if res.Series != 414 {
		t.Errorf("scored %d series, want 414", res.Series)
	}
	if owa > 0.60 {
		t.Errorf("OWA %.3f > 0.60", owa)
	}
	if s.MSIS > 9.0 {
		t.Errorf("MSIS %.2f > 9.0", s.MSIS)
	}
	if s.Coverage < 0.93 || s.Coverage > 0.97 {
		t.Errorf("coverage %.3f outside [0.93, 0.97]", s.Coverage)
	}
}
