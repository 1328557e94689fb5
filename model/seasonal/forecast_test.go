package seasonal

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/model"
)

func m4Series(t *testing.T) []m4.Series {
	t.Helper()
	dir := os.Getenv("PREWARM_DATASETS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	dir = filepath.Join(dir, "m4-hourly")
	s, err := m4.LoadHourly(dir)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("M4 Hourly data not found at %s (set PREWARM_DATASETS): %v", dir, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// References on M4 series H1 from R's forecast 8.x:
//
//	f <- snaive(ts(h1, frequency=24), h=48, level=95)
//	f$mean[c(1,25,48)]; f$lower[...]; f$upper[...]
//
// and from the M4 competition's Naive2 code (SeasonalityTest, then
// decompose(type="multiplicative"), naive, reseasonalise) for H1-H3.
func TestForecastersMatchR(t *testing.T) {
	series := m4Series(t)
	steps := []int{0, 24, 47}
	tests := []struct {
		name  string
		f     model.Forecaster
		id    int
		mean  []float64
		lower []float64
		upper []float64
	}{
		{name: "snaive H1", f: SeasonalNaive{Period: 24}, id: 0,
			mean:  []float64{691, 691, 684},
			lower: []float64{572.247483702119, 523.058580885605, 516.058580885605},
			upper: []float64{809.752516297881, 858.941419114395, 851.941419114395}},
		{name: "naive2 H1", f: Naive2{Period: 24}, id: 0, mean: []float64{620.173494986446, 620.173494986446, 684}},
		{name: "naive2 H2", f: Naive2{Period: 24}, id: 1, mean: []float64{2842.75904202585, 2842.75904202585, 3105}},
		{name: "naive2 H3", f: Naive2{Period: 24}, id: 2, mean: []float64{1470.24795054818, 1470.24795054818, 1518}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fc, err := tc.f.Forecast(series[tc.id].Train, 48, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			for i, j := range steps {
				if !near(fc.Mean[j], tc.mean[i], 1e-9) {
					t.Errorf("mean[%d] = %.12f, want %.12f", j, fc.Mean[j], tc.mean[i])
				}
				if tc.lower != nil && !near(fc.Lower[j], tc.lower[i], 1e-9) {
					t.Errorf("lower[%d] = %.12f, want %.12f", j, fc.Lower[j], tc.lower[i])
				}
				if tc.upper != nil && !near(fc.Upper[j], tc.upper[i], 1e-9) {
					t.Errorf("upper[%d] = %.12f, want %.12f", j, fc.Upper[j], tc.upper[i])
				}
			}
		})
	}
}

// Every forecaster returns finite forecasts of the right length, with the
// mean inside its interval, on awkward histories; errors only for
// arguments no method can serve.
func TestForecastersAwkwardInput(t *testing.T) {
	nan := math.NaN()
	daily := synthetic(24*10, 24, false, 3, 20)
	gappy := append([]float64(nil), daily...)
	for i := 30; i < 60; i++ {
		gappy[i] = nan
	}
	forecasters := map[string]model.Forecaster{
		"naive":          Naive{},
		"snaive":         SeasonalNaive{Period: 24},
		"naive2":         Naive2{Period: 24},
		"profile":        Profile{Period: 24, Cycles: 7},
		"profile-median": Profile{Period: 24, Cycles: 7, Robust: true},
		"shape-damped":   Profile{Period: 24, Cycles: 3, Relative: true, Damping: 0.9},
	}
	histories := map[string][]float64{
		"daily":         daily,
		"gaps":          gappy,
		"leading NaN":   append([]float64{nan, nan}, daily...),
		"constant":      {5, 5, 5, 5, 5, 5, 5, 5},
		"zeros":         make([]float64, 100),
		"one value":     {7},
		"short":         {1, 2, 3, 4, 5},
		"with negative": append([]float64{-3, 4}, daily...),
		// Near the top of the float64 range: squared differences would
		// overflow to an infinite interval.
		"huge": func() []float64 {
			out := make([]float64, len(daily))
			for i, v := range daily {
				out[i] = 1e200 * v
			}
			return out
		}(),
		"with Inf": append([]float64{math.Inf(1)}, append(daily, math.Inf(-1))...),
	}
	for fname, f := range forecasters {
		for hname, h := range histories {
			t.Run(fname+"/"+hname, func(t *testing.T) {
				fc, err := f.Forecast(h, 30, 0.9)
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				if fc.Horizon() != 30 || len(fc.Lower) != 30 || len(fc.Upper) != 30 {
					t.Fatalf("lengths %d/%d/%d, want 30", len(fc.Mean), len(fc.Lower), len(fc.Upper))
				}
				for j := range fc.Mean {
					m, lo, up := fc.Mean[j], fc.Lower[j], fc.Upper[j]
					if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(up) || math.IsInf(up, 0) {
						t.Fatalf("step %d not finite: %v [%v, %v]", j, m, lo, up)
					}
					if lo > m || m > up {
						t.Fatalf("step %d: mean %v outside [%v, %v]", j, m, lo, up)
					}
				}
				if fc.Level != 0.9 {
					t.Errorf("Level = %v, want 0.9", fc.Level)
				}
			})
		}
	}
	for fname, f := range forecasters {
		for _, bad := range []struct {
			name    string
			history []float64
			horizon int
			level   float64
		}{
			{"horizon 0", daily, 0, 0.9},
			{"level 1", daily, 5, 1},
			{"level 0", daily, 5, 0},
			{"all NaN", []float64{nan, nan}, 5, 0.9},
			{"empty", nil, 5, 0.9},
		} {
			if _, err := f.Forecast(bad.history, bad.horizon, bad.level); err == nil {
				t.Errorf("%s/%s: no error", fname, bad.name)
			}
		}
	}
}

func TestShortHistoryFallsBack(t *testing.T) {
	fc, err := SeasonalNaive{Period: 24}.Forecast([]float64{1, 2, 3}, 5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fc.Fallback, "naive") || fc.Mean[4] != 3 {
		t.Errorf("Fallback %q, mean %v: want naive on the last value", fc.Fallback, fc.Mean)
	}
}

func TestProfile(t *testing.T) {
	// Three cycles of period 4; the median and mean per position differ
	// where one cycle is an outlier.
	x := []float64{
		1, 2, 3, 4,
		1, 2, 30, 4,
		1, 2, 3, 4,
	}
	tests := []struct {
		name string
		p    Profile
		want []float64
	}{
		{"mean", Profile{Period: 4}, []float64{1, 2, 12, 4, 1}},
		{"median", Profile{Period: 4, Robust: true}, []float64{1, 2, 3, 4, 1}},
		{"last cycle", Profile{Period: 4, Cycles: 1}, []float64{1, 2, 3, 4, 1}},
		{"last two", Profile{Period: 4, Cycles: 2}, []float64{1, 2, 16.5, 4, 1}},
	}
	if got := (Profile{Period: 0}).Point(x, 2); got[1] != 4 {
		t.Errorf("period 0: Point = %v, want the last value", got)
	}
	if got := (Profile{Period: 40}).Point(x, 2); got[1] != 4 {
		t.Errorf("history shorter than the period: Point = %v, want the last value", got)
	}
	for _, tc := range tests {
		got := tc.p.Point(x, 5)
		for j := range tc.want {
			if !near(got[j], tc.want[j], 1e-12) {
				t.Errorf("%s: Point = %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// A relative profile follows the level: the shape of the last cycles
	// times the latest cycle's mean.
	growing := []float64{10, 20, 10, 20, 20, 40, 20, 40}
	got := Profile{Period: 4, Cycles: 2, Relative: true}.Point(growing, 4)
	want := []float64{20, 40, 20, 40}
	for j := range want {
		if !near(got[j], want[j], 1e-12) {
			t.Fatalf("relative: Point = %v, want %v", got, want)
		}
	}
}

// The profile's empirical interval covers about its nominal level on a
// stationary noisy cycle.
func TestProfileIntervalCoverage(t *testing.T) {
	x := synthetic(24*7*12, 24, false, 8, 21)
	train, test := x[:len(x)-24*7], x[len(x)-24*7:]
	fc, err := Profile{Period: 24, Cycles: 7}.Forecast(train, len(test), 0.9)
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	for j, y := range test {
		if y >= fc.Lower[j] && y <= fc.Upper[j] {
			in++
		}
	}
	if cov := float64(in) / float64(len(test)); cov < 0.8 || cov > 0.99 {
		t.Errorf("coverage %.3f of a 90%% interval, want 0.80–0.99", cov)
	}
}

// TestProfilePointShortHorizonIsAPrefix: a horizon shorter than the
// period profiles only the positions it reaches, and gives the same bits
// as the first steps of a forecast over several periods.
func TestProfilePointShortHorizonIsAPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	x := make([]float64, 24*10+7)
	for i := range x {
		x[i] = 50 + 20*math.Sin(float64(i)/4) + 5*rng.NormFloat64()
	}
	for _, p := range []Profile{
		{Period: 24, Cycles: 1},
		{Period: 24, Cycles: 7, Robust: true, Relative: true},
		{Period: 24, Cycles: 3, Relative: true, Damping: 0.9},
		{Period: 168, Cycles: 1},
	} {
		long := p.Point(x, 3*p.Period)
		for _, h := range []int{1, 5, p.Period - 1, p.Period} {
			short := p.Point(x, h)
			for j := range short {
				if math.Float64bits(short[j]) != math.Float64bits(long[j]) {
					t.Fatalf("%s, horizon %d: step %d is %v, the long forecast's %v", p.Name(), h, j, short[j], long[j])
				}
			}
		}
	}
}
