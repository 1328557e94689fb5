package seasonal

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// stlCase builds trend + seasonal + noise with known parts.
func stlCase(n, period int, noise float64, outliers int, seed uint64) (x, trend, season []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	x = make([]float64, n)
	trend = make([]float64, n)
	season = make([]float64, n)
	for t := range x {
		trend[t] = 50 + 0.05*float64(t) + 5*math.Sin(2*math.Pi*float64(t)/float64(8*period))
		season[t] = 10 * math.Sin(2*math.Pi*float64(t%period)/float64(period))
		x[t] = trend[t] + season[t] + noise*rng.NormFloat64()
	}
	for k := 0; k < outliers; k++ {
		x[rng.IntN(n)] += 200
	}
	return x, trend, season
}

func rmsDiff(a, b []float64, from, to int) float64 {
	s := 0.0
	for t := from; t < to; t++ {
		d := a[t] - b[t]
		s += d * d
	}
	return math.Sqrt(s / float64(to-from))
}

func TestSTLRecoversParts(t *testing.T) {
	tests := []struct {
		name     string
		outliers int
		robust   bool
		// Tolerances on the RMS error of the seasonal part (amplitude 10)
		// away from the ends.
		maxSeasonalRMS float64
	}{
		{"clean", 0, false, 0.8},
		{"outliers, robust", 15, true, 0.8},
	}
	const period, n = 24, 24 * 30
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, trend, season := stlCase(n, period, 1, tc.outliers, 11)
			d, err := STL(x, period, STLOptions{Robust: tc.robust})
			if err != nil {
				t.Fatal(err)
			}
			if got := rmsDiff(d.Seasonal, season, 2*period, n-2*period); got > tc.maxSeasonalRMS {
				t.Errorf("seasonal RMS error %.3f, want ≤ %.2f", got, tc.maxSeasonalRMS)
			}
			if got := rmsDiff(d.Trend, trend, 2*period, n-2*period); got > 1.5 {
				t.Errorf("trend RMS error %.3f, want ≤ 1.5", got)
			}
			for i := range x {
				if math.Abs(d.Trend[i]+d.Seasonal[i]+d.Remainder[i]-x[i]) > 1e-9 {
					t.Fatalf("t=%d: parts do not add up to the series", i)
				}
			}
			for i, v := range d.Figure {
				want := 10 * math.Sin(2*math.Pi*float64(i)/period)
				if math.Abs(v-want) > 2 {
					t.Errorf("figure[%d] = %.2f, want %.2f ± 2", i, v, want)
				}
			}
		})
	}
}

// Robust mode must beat the plain one when outliers are present.
func TestSTLRobustHelps(t *testing.T) {
	const period, n = 24, 24 * 30
	x, _, season := stlCase(n, period, 1, 25, 12)
	plain, _ := STL(x, period, STLOptions{})
	robust, _ := STL(x, period, STLOptions{Robust: true})
	ep := rmsDiff(plain.Seasonal, season, 2*period, n-2*period)
	er := rmsDiff(robust.Seasonal, season, 2*period, n-2*period)
	if er >= ep {
		t.Errorf("robust seasonal RMS error %.3f not below plain %.3f", er, ep)
	}
}

func TestSTLErrors(t *testing.T) {
	if _, err := STL(make([]float64, 30), 24, STLOptions{}); !errors.Is(err, ErrTooShort) {
		t.Errorf("short: err = %v, want ErrTooShort", err)
	}
	if _, err := STL(make([]float64, 30), 1, STLOptions{}); err == nil {
		t.Error("period 1 accepted")
	}
	x, _, _ := stlCase(24*10, 24, 1, 0, 13)
	x[5], x[100] = math.NaN(), math.NaN()
	d, err := STL(x, 24, STLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(d.Trend[100]) || math.IsNaN(d.Seasonal[100]) {
		t.Error("a missing value left NaN in the fitted parts")
	}
}

// TestScratchGivesTheSameDecomposition: one Scratch lent to decompositions
// of other lengths, periods and modes, one after another, leaves each
// result bit for bit what a decomposition with its own memory gives.
func TestScratchGivesTheSameDecomposition(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	x := make([]float64, 24*7*5)
	for i := range x {
		x[i] = 100 + 30*math.Sin(2*math.Pi*float64(i)/24) + 10*math.Sin(2*math.Pi*float64(i)/168) + 5*rng.NormFloat64()
	}
	scratch := &Scratch{}
	for _, tt := range []struct {
		n       int
		periods []int
		robust  bool
	}{
		{len(x), []int{24, 168}, false},
		{len(x) - 48, []int{24}, false},
		{len(x) - 12, []int{24, 168}, true},
		{400, []int{24, 168}, false},
		{len(x), []int{12, 24}, true},
	} {
		want, err := MSTL(x[:tt.n], tt.periods, MSTLOptions{Robust: tt.robust})
		if err != nil {
			t.Fatal(err)
		}
		got, err := MSTL(x[:tt.n], tt.periods, MSTLOptions{Robust: tt.robust, Scratch: scratch})
		if err != nil {
			t.Fatal(err)
		}
		parts := func(d MultiDecomposition) [][]float64 {
			return append([][]float64{d.Trend, d.Remainder}, d.Seasonal...)
		}
		for i, p := range parts(want) {
			for j, v := range p {
				if math.Float64bits(v) != math.Float64bits(parts(got)[i][j]) {
					t.Fatalf("n %d periods %v robust %v: part %d step %d is %v with the scratch, %v without",
						tt.n, tt.periods, tt.robust, i, j, parts(got)[i][j], v)
				}
			}
		}
	}
}
