package seasonal

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// rDecomposition is one case of testdata/r_stl.json, written by
// testdata/r_stl.R (which names the R call of each case).
type rDecomposition struct {
	Name      string         `json:"name"`
	Call      string         `json:"call"`
	Kind      string         `json:"kind"`
	Periods   any            `json:"periods"`
	Args      map[string]any `json:"args"`
	X         []float64      `json:"x"`
	Trend     []float64      `json:"trend"`
	Seasonal  [][]float64    `json:"seasonal"`
	Remainder []float64      `json:"remainder"`
}

func loadRDecompositions(t *testing.T) []rDecomposition {
	t.Helper()
	raw, err := os.ReadFile("testdata/r_stl.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []rDecomposition `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("no cases in testdata/r_stl.json")
	}
	return f.Cases
}

func (c rDecomposition) periods() []int {
	switch p := c.Periods.(type) {
	case float64:
		return []int{int(p)}
	case []any:
		out := make([]int, len(p))
		for i, v := range p {
			out[i] = int(v.(float64))
		}
		return out
	}
	return nil
}

// stlTolerance is the agreement with R: relative to the series' range,
// per value. The Go code follows the Fortran's arithmetic step by step, so
// only rounding differs.
const stlTolerance = 1e-9

func assertClose(t *testing.T, what string, got, want []float64, scale float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, R has %d", what, len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range want {
		if d := math.Abs(got[i] - want[i]); d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	if !(worst <= stlTolerance*scale) {
		t.Errorf("%s: largest difference from R %.3g at %d (got %v, R %v), tolerance %.3g", what, worst, at, got[at], want[at], stlTolerance*scale)
	}
}

func seriesRange(x []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi - lo
}

func TestSTLMatchesR(t *testing.T) {
	for _, c := range loadRDecompositions(t) {
		if c.Kind != "stl" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			opts := STLOptions{}
			for k, v := range c.Args {
				switch k {
				case "s.window":
					opts.SeasonalWindow = int(v.(float64))
				case "s.degree":
					opts.SeasonalDegree = int(v.(float64))
				case "t.window":
					opts.TrendWindow = int(v.(float64))
				case "robust":
					opts.Robust = v.(bool)
				default:
					t.Fatalf("unknown argument %q in %s", k, c.Call)
				}
			}
			d, err := STL(c.X, c.periods()[0], opts)
			if err != nil {
				t.Fatalf("%s: %v", c.Call, err)
			}
			scale := seriesRange(c.X)
			assertClose(t, c.Call+" trend", d.Trend, c.Trend, scale)
			assertClose(t, c.Call+" seasonal", d.Seasonal, c.Seasonal[0], scale)
			assertClose(t, c.Call+" remainder", d.Remainder, c.Remainder, scale)
		})
	}
}

func TestMSTLMatchesR(t *testing.T) {
	for _, c := range loadRDecompositions(t) {
		if c.Kind != "mstl" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			d, err := MSTL(c.X, c.periods(), MSTLOptions{})
			if err != nil {
				t.Fatalf("%s: %v", c.Call, err)
			}
			if len(d.Seasonal) != len(c.Seasonal) {
				t.Fatalf("%s: %d seasonal parts (periods %v), R has %d", c.Call, len(d.Seasonal), d.Periods, len(c.Seasonal))
			}
			scale := seriesRange(c.X)
			assertClose(t, c.Call+" trend", d.Trend, c.Trend, scale)
			for i := range d.Seasonal {
				assertClose(t, c.Call+" seasonal", d.Seasonal[i], c.Seasonal[i], scale)
			}
			assertClose(t, c.Call+" remainder", d.Remainder, c.Remainder, scale)
		})
	}
}

// BenchmarkMSTLPerMinute decomposes four weeks of per-minute data
// (40,320 points) at periods 1440 and 10080, as R's
// mstl(msts(x, seasonal.periods = c(1440, 10080))) does (model/auto's
// testdata/r_speed.R times R on such a series).
func BenchmarkMSTLPerMinute(b *testing.B) {
	x := workWeek(1440, 7, 4, 5)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MSTL(x, []int{1440, 10080}, MSTLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSTLHourly is one STL of an M4-sized hourly series (960 points,
// period 24, s.window 11).
func BenchmarkSTLHourly(b *testing.B) {
	x := workWeek(24, 7, 6, 6)[:960]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := STL(x, 24, STLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
