package seasonal

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/model"
)

// refSeries is a short quarterly-looking series used for the R references.
var refSeries = []float64{5, 7, 3, 8, 6, 9, 4, 10, 7, 11, 5, 12, 8, 13, 6, 14}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// References from R 4.x (stats), produced by:
//
//	x <- c(5, 7, 3, 8, 6, 9, 4, 10, 7, 11, 5, 12, 8, 13, 6, 14)
//	acf(x, lag.max=6, plot=FALSE)$acf
func TestACFMatchesR(t *testing.T) {
	want := []float64{1, -0.33750, 0.68750, -0.33125, 0.59375, -0.39375, 0.34375}
	got := ACF(refSeries, 6)
	if len(got) != len(want) {
		t.Fatalf("ACF has %d lags, want %d", len(got), len(want))
	}
	for k := range want {
		if !near(got[k], want[k], 1e-9) {
			t.Errorf("r[%d] = %.12f, want %.5f", k, got[k], want[k])
		}
	}
	if ACF([]float64{3, 3, 3, 3}, 2) != nil {
		t.Error("ACF of a constant series should be nil")
	}
	if r := ACF(refSeries, 100); len(r) != len(refSeries) {
		t.Errorf("maxLag not clipped: %d lags", len(r))
	}
}

// References: decompose(ts(x, frequency=4), type=...)$figure and $trend.
func TestClassicalMatchesR(t *testing.T) {
	tests := []struct {
		name           string
		multiplicative bool
		figure         []float64
	}{
		{"multiplicative", true, []float64{0.868858669264219, 1.297362820863885, 0.540499233392964, 1.293279276478932}},
		{"additive", false, []float64{-1.1875, 2.4375, -3.4375, 2.1875}},
	}
	trend := []float64{math.NaN(), math.NaN(), 5.875, 6.25, 6.625, 7, 7.375, 7.75, 8.125, 8.5, 8.875, 9.25, 9.625, 10, math.NaN(), math.NaN()}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Classical(refSeries, 4, tc.multiplicative)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.figure {
				if !near(d.Figure[i], w, 1e-12) {
					t.Errorf("figure[%d] = %.15f, want %.15f", i, d.Figure[i], w)
				}
			}
			for i, w := range trend {
				if math.IsNaN(w) != math.IsNaN(d.Trend[i]) || !math.IsNaN(w) && !near(d.Trend[i], w, 1e-12) {
					t.Errorf("trend[%d] = %v, want %v", i, d.Trend[i], w)
				}
			}
			// The parts put back together give the series where defined.
			for i, v := range refSeries {
				if math.IsNaN(d.Trend[i]) {
					continue
				}
				back := d.Trend[i] + d.Seasonal[i] + d.Remainder[i]
				if tc.multiplicative {
					back = d.Trend[i] * d.Seasonal[i] * d.Remainder[i]
				}
				if !near(back, v, 1e-12) {
					t.Errorf("t=%d: parts give %v, series %v", i, back, v)
				}
			}
		})
	}
}

func TestClassicalErrors(t *testing.T) {
	if _, err := Classical(refSeries, 10, false); !errors.Is(err, ErrTooShort) {
		t.Errorf("short series: err = %v, want ErrTooShort", err)
	}
	if _, err := Classical(refSeries, 1, false); err == nil {
		t.Error("period 1 accepted")
	}
	neg := slices.Clone(refSeries)
	neg[3] = -1
	if _, err := Classical(neg, 4, true); err == nil {
		t.Error("multiplicative decomposition of a negative value accepted")
	}
}

// synthetic returns n steps of a daily (period day) and optionally weekly
// cycle with Gaussian noise of standard deviation noise, seeded.
func synthetic(n, day int, weekly bool, noise float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for t := range x {
		phase := 2 * math.Pi * float64(t%day) / float64(day)
		v := 100 + 30*math.Sin(phase) + 10*math.Cos(2*phase)
		if weekly && (t/day)%7 >= 5 {
			v *= 0.6 // weekend dip
		}
		x[t] = v + noise*rng.NormFloat64() + 0.01*float64(t)
	}
	return x
}

func whiteNoise(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func TestDetectSynthetic(t *testing.T) {
	tests := []struct {
		name string
		x    []float64
		want []int
	}{
		{"hourly daily+weekly", synthetic(24*7*6, 24, true, 5, 1), []int{24, 168}},
		{"half-hourly daily+weekly", synthetic(48*7*5, 48, true, 5, 2), []int{48, 336}},
		{"hourly daily only", synthetic(24*7*6, 24, false, 5, 3), []int{24}},
		{"daily only, 3 weeks, noisy", synthetic(24*21, 24, false, 15, 4), []int{24}},
		{"per-minute daily, snapped to the clock", synthetic(1440*4, 1440, false, 5, 5), []int{1440}},
		{"white noise 1000", whiteNoise(1000, 6), nil},
		{"white noise 100", whiteNoise(100, 7), nil},
		{"trend only", func() []float64 {
			x := make([]float64, 500)
			for i := range x {
				x[i] = float64(i) * 0.5
			}
			return x
		}(), nil},
		{"too short", []float64{1, 2, 3}, nil},
		{"gaps and infinities", func() []float64 {
			x := synthetic(24*7*6, 24, true, 5, 8)
			for i := 100; i < 130; i++ {
				x[i] = math.NaN()
			}
			x[400] = math.Inf(1)
			return x
		}(), []int{24, 168}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(tc.x, DetectOptions{Snap: []int{1440, 10080}})
			if !slices.Equal(got, tc.want) {
				t.Errorf("Detect = %v, want %v", got, tc.want)
			}
		})
	}
	// Without the clock's help the broad per-minute peak is found within 2%.
	got := Detect(synthetic(1440*4, 1440, false, 5, 5), DetectOptions{})
	if len(got) != 1 || math.Abs(float64(got[0]-1440)) > 1440*0.02 {
		t.Errorf("per-minute daily without Snap: Detect = %v, want one period within 2%% of 1440", got)
	}
}

// White noise of many seeds and lengths must practically never look
// seasonal, and a daily-only series must not sprout a weekly period.
func TestDetectFalsePositives(t *testing.T) {
	noiseHits, weeklyHits := 0, 0
	const trials = 40
	for seed := range uint64(trials) {
		if p := Detect(whiteNoise(200+int(seed)*50, seed+100), DetectOptions{}); p != nil {
			noiseHits++
			t.Logf("white noise seed %d: %v", seed, p)
		}
		if p := Detect(synthetic(24*7*4, 24, false, 10, seed+200), DetectOptions{}); !slices.Equal(p, []int{24}) {
			weeklyHits++
			t.Logf("daily seed %d: %v", seed, p)
		}
	}
	if noiseHits > 0 {
		t.Errorf("white noise reported seasonal in %d of %d trials", noiseHits, trials)
	}
	if weeklyHits > 2 {
		t.Errorf("daily-only series misdetected in %d of %d trials", weeklyHits, trials)
	}
}

// tracesDir is where the real demand traces live; tests skip without it.
func tracesDir(t *testing.T) string {
	dir := os.Getenv("PREWARM_DATASETS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	dir = filepath.Join(dir, "traces")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real traces not found at %s (set PREWARM_DATASETS to the shared datasets folder): %v", dir, err)
	}
	return dir
}

func TestDetectRealTraces(t *testing.T) {
	dir := tracesDir(t)
	tests := []struct {
		file string
		want []int
	}{
		{"alibaba_sd_requests_hourly.csv", []int{24, 168}},
		{"nyc_taxi.csv", []int{48, 336}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s, err := datasets.LoadCSV(filepath.Join(dir, tc.file), datasets.CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(s.Values, DetectOptions{}); !slices.Equal(got, tc.want) {
				t.Errorf("Detect = %v, want %v", got, tc.want)
			}
		})
	}
}

// The M4 competition's seasonality test. On the reference series r(4) =
// 0.59375 falls short of the limit 1.645/4·√(1 + 2·(r1² + r2² + r3²)) =
// 0.636, so it is not seasonal at lag 4; fewer than 3 periods of 8 is "no"
// without looking.
func TestSeasonalityTest(t *testing.T) {
	long := synthetic(24*10, 24, false, 5, 9)
	tests := []struct {
		name string
		x    []float64
		m    int
		want bool
	}{
		{"seasonal", long, 24, true},
		{"white noise", whiteNoise(300, 10), 24, false},
		{"too short", refSeries, 8, false},
		{"ref lag 4 below the limit", refSeries, 4, false},
	}
	for _, tc := range tests {
		if got := SeasonalityTest(tc.x, tc.m); got != tc.want {
			t.Errorf("%s: SeasonalityTest = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFillGaps(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		x      []float64
		period int
		want   []float64
	}{
		{"leading", []float64{nan, nan, 3, 4}, 0, []float64{3, 3, 3, 4}},
		{"previous", []float64{1, nan, 3}, 0, []float64{1, 1, 3}},
		{"one period back", []float64{1, 2, 3, nan}, 2, []float64{1, 2, 3, 2}},
		{"inf", []float64{1, math.Inf(1), 3}, 0, []float64{1, 1, 3}},
	}
	for _, tc := range tests {
		if got := FillGaps(tc.x, tc.period); !slices.Equal(got, tc.want) {
			t.Errorf("%s: FillGaps = %v, want %v", tc.name, got, tc.want)
		}
	}
}

var _ model.Forecaster = SeasonalNaive{}
