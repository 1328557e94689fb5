package auto

import (
	"math"
	"testing"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/seasonal"
)

func TestScratchExtremes(t *testing.T) {
	inf := math.Inf(1)
	big := make([]float64, 24*30)
	for i := range big { big[i] = 1e307 * float64(1+i%24) / 24 }
	tiny := make([]float64, 24*30)
	for i := range tiny { tiny[i] = 1e-300 * float64(1+i%24) }
	withInf := demand(24*30, 3)
	withInf[100] = inf
	withInf[len(withInf)-1] = math.Inf(-1)
	neg := demand(24*30, 4)
	for i := range neg { neg[i] -= 1e6 }
	two := []float64{1, 2}
	cases := map[string][]float64{"big": big, "tiny": tiny, "inf": withInf, "neg": neg, "two": two, "allinf": {inf, inf}}
	fcs := map[string]model.Forecaster{"auto": New(Config{}), "auto24": New(Config{Periods: []int{24}}), "snaive": seasonal.SeasonalNaive{Period: 24},
		"naive2": seasonal.Naive2{Period: 24}, "profile": seasonal.Profile{Period: 24, Cycles: 7, Robust: true, Relative: true}, "naive": seasonal.Naive{}}
	for cn, x := range cases {
		for fn, f := range fcs {
			for _, h := range []int{1, 48, 1000} {
				fc, err := f.Forecast(x, h, 0.95)
				if err != nil { t.Logf("%s/%s/%d: err %v", cn, fn, h, err); continue }
				for j := range fc.Mean {
					if !(isFin(fc.Mean[j]) && isFin(fc.Lower[j]) && isFin(fc.Upper[j])) || fc.Lower[j] > fc.Mean[j] || fc.Upper[j] < fc.Mean[j] {
						t.Errorf("%s/%s/h=%d step %d: %v %v %v (%s %s)", cn, fn, h, j, fc.Lower[j], fc.Mean[j], fc.Upper[j], fc.Method, fc.Fallback)
						break
					}
				}
			}
		}
	}
}
func isFin(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
