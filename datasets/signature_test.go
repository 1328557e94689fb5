package datasets

import (
	"math"
	"strings"
	"testing"
	"time"
)

func minuteSeries(t *testing.T, start string, values ...float64) Series {
	t.Helper()
	return Series{Name: "hand", Start: mustTime(t, start), Step: time.Minute, Values: values}
}

// TestMeasureSignatureByHand measures 15 minutes in steps of 3 minutes,
// every figure worked out by hand:
//
//	step  rows     mean  busiest/mean  r = row/mean − 1
//	A     1 2 3    2     1.5           −½ 0 ½
//	B     0 0 6    2     3             −1 −1 2
//	C     4 4 4    4     1             0 0 0
//	D     0 0 0    0     left out (mean not positive)
//	E     NaN 2 4  3     4/3           · −⅓ ⅓
//
// Ratios sorted 1, 4/3, 1.5, 3: mean 6.8333/4 = 1.708333, median at index
// int(0.5·3) = 1 → 4/3, p90 at int(0.9·3) = 2 → 1.5. Σr² = ½ + 6 + 0 +
// 2/9 = 121/18 over 11 rows: CV = sqrt(11/18) = 0.781736. Lag pairs within
// steps: A 0, B (−1)(−1) + (−1)(2) = −1, C 0, E (−⅓)(⅓) = −1/9 (the pair
// with NaN skipped, and A's last with B's first, −½, is across steps): Lag1
// = −10/9 / (121/18) = −20/121. All rows are hour 0: day/night 1. The 14
// finite rows sum to 30 (mean 15/7), the largest is 6: peak/mean 2.8.
// Sorted rows 0 0 0 0 0 1 2 2 3 4 4 4 4 6: p99 at int(0.99·13) = 12 → 4,
// so the share above p99 is (6 − 4)/30 = 1/15.
func TestMeasureSignatureByHand(t *testing.T) {
	nan := math.NaN()
	s := minuteSeries(t, "2024-01-01T00:00:00Z",
		1, 2, 3, 0, 0, 6, 4, 4, 4, 0, 0, 0, nan, 2, 4)
	sig, err := MeasureSignature(s, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Step != 3*time.Minute || sig.Steps != 4 || sig.Rows != 11 {
		t.Errorf("step %v, %d steps, %d rows; want 3m0s, 4, 11", sig.Step, sig.Steps, sig.Rows)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"busiest/mean mean", sig.PeakRatioMean, 6.8333333333333333 / 4},
		{"busiest/mean median", sig.PeakRatioMedian, 4.0 / 3},
		{"busiest/mean p90", sig.PeakRatioP90, 1.5},
		{"CV", sig.CV, math.Sqrt(11.0 / 18)},
		{"lag-1", sig.Lag1, -20.0 / 121},
		{"day/night", sig.DayNight, 1},
		{"peak/mean", sig.PeakToMean, 2.8},
		{"share above p99", sig.ShareAboveP99, 1.0 / 15},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s %.9g, want %.9g", c.name, c.got, c.want)
		}
	}
	line := sig.String()
	for _, want := range []string{"step 3m0s", "4 steps", "11 rows", "1.71 mean", "1.33 median", "1.5 p90",
		"CV 0.782", "lag-1 -0.165", "day/night 1;", "peak/mean 2.8", "above p99 6.67%"} {
		if !strings.Contains(line, want) {
			t.Errorf("String() = %q, want it to contain %q", line, want)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("String() = %q spans lines", line)
	}
}

// TestMeasureSignatureWholeSteps leaves out the steps cut by the series'
// ends: from 00:01 the 3-minute window from 00:00 holds only 10 and 1,
// the one from 00:06 only 9. The one whole step, 1 2 3, has busiest/mean
// 1.5; counting the cut ones would add 10/5.5 and 1.
func TestMeasureSignatureWholeSteps(t *testing.T) {
	s := minuteSeries(t, "2024-01-01T00:01:00Z", 10, 1, 1, 2, 3, 9)
	sig, err := MeasureSignature(s, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Steps != 1 || sig.Rows != 3 || sig.PeakRatioMean != 1.5 || sig.PeakRatioP90 != 1.5 {
		t.Errorf("%d steps, %d rows, busiest/mean %v (p90 %v); want 1, 3, 1.5 (1.5)",
			sig.Steps, sig.Rows, sig.PeakRatioMean, sig.PeakRatioP90)
	}
	// The whole-series figures count every row: peak 10 over mean 26/6.
	if want := 10 / (26.0 / 6); math.Abs(sig.PeakToMean-want) > 1e-12 {
		t.Errorf("peak/mean %v, want %v", sig.PeakToMean, want)
	}
}

// TestMeasureSignatureDayNight checks the daily swing on two days of
// hourly rows: day one 1 + hour, day two three times that, but hour 0 of
// day two missing. The hour-of-day means are 2·(1 + h) for h ≥ 1 and 1 for
// hour 0 (its one finite row), so the swing is 48/1; the largest over the
// smallest row would be 72/1, and NaN not skipped would give NaN.
func TestMeasureSignatureDayNight(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	s := Series{Name: "hourly", Start: start, Step: time.Hour, Values: make([]float64, 48)}
	for i := range s.Values {
		s.Values[i] = float64(1 + i%24)
		if i >= 24 {
			s.Values[i] *= 3
		}
	}
	s.Values[24] = math.NaN()
	sig, err := MeasureSignature(s, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if sig.DayNight != 48 {
		t.Errorf("day/night %v, want 48", sig.DayNight)
	}
	if sig.Steps != 24 {
		t.Errorf("%d steps, want 24", sig.Steps)
	}
}

func TestMeasureSignatureErrors(t *testing.T) {
	start := "2024-01-01T00:00:00Z"
	tests := []struct {
		name string
		s    Series
		step time.Duration
		err  string
	}{
		{"too short", minuteSeries(t, start, make([]float64, 29)...), 30 * time.Minute,
			"29 rows of 1m0s are too short for one whole 30m0s step"},
		{"empty", minuteSeries(t, start), 30 * time.Minute, "too short"},
		{"no positive step", minuteSeries(t, start, 0, 0, 0, math.NaN(), math.NaN(), math.NaN()), 3 * time.Minute,
			"no whole step has a positive mean"},
		{"zero step", minuteSeries(t, start, 1, 2, 3), 0, "must be positive"},
		{"series without a step", Series{Name: "hand", Values: []float64{1}}, time.Minute, "must be positive"},
		{"finer step", minuteSeries(t, start, 1, 2, 3), 30 * time.Second, "finer than the series' step"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MeasureSignature(tt.s, tt.step)
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "signature of") {
				t.Fatalf("MeasureSignature() = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}
