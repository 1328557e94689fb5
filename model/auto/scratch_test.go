//go:build scratch

package auto

import (
	"github.com/prewarm/prewarm/model/holtwinters"
	"math"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets/m4"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
	"github.com/prewarm/prewarm/model/seasonal"
)

type cand struct {
	name string
	f    model.Forecaster
}

func evalAll(t *testing.T, cs []cand) {
	series, err := m4.LoadHourly("/work/shared/datasets/m4-hourly")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("N") != "" {
		var n int
		fmt.Sscan(os.Getenv("N"), &n)
		series = series[:n]
	}
	for _, c := range cs {
		start := time.Now()
		r, err := m4.Evaluate(t.Context(), c.f, series, m4.EvalOptions{Horizon: 48})
		if err != nil {
			t.Fatal(err)
		}
		sc := r.Scores
		fmt.Printf("%-28s sMAPE %7.3f MASE %6.3f OWA %.4f MSIS %6.2f cov %.3f fb %d  %.2fs\n", c.name, sc.SMAPE, sc.MASE,
			accuracy.OWA(sc.SMAPE, sc.MASE, 18.383, 2.395), sc.MSIS, sc.Coverage, r.Fallbacks, time.Since(start).Seconds())
	}
}

type fn func(x []float64, h int) []float64

func (f fn) Forecast(x []float64, h int, level float64) (model.Forecast, error) {
	m := f(x, h)
	sn, _ := seasonal.SeasonalNaive{Period: 24}.Forecast(x, h, level)
	lo := make([]float64, h)
	up := make([]float64, h)
	for i := range m {
		lo[i] = m[i] - (sn.Mean[i] - sn.Lower[i])
		up[i] = m[i] + (sn.Upper[i] - sn.Mean[i])
	}
	return model.Forecast{Mean: m, Lower: lo, Upper: up, Level: level}, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}


// levelProfile: level = mean of last m; shape = agg over last K blocks of (y - block mean) (or ratio).
func levelProfile(m, K int, robust, mult bool, trendDamp float64) fn {
	return func(x []float64, h int) []float64 {
		n := len(x)
		if n < m*K {
			K = n / m
		}
		shape := make([][]float64, m)
		for k := 0; k < K; k++ {
			blk := x[n-(k+1)*m : n-k*m]
			mu := 0.0
			for _, v := range blk {
				mu += v
			}
			mu /= float64(m)
			for i, v := range blk {
				if mult {
					shape[i] = append(shape[i], v/mu)
				} else {
					shape[i] = append(shape[i], v-mu)
				}
			}
		}
		idx := make([]float64, m)
		for i := range idx {
			if robust {
				idx[i] = median(shape[i])
			} else {
				s := 0.0
				for _, v := range shape[i] {
					s += v
				}
				idx[i] = s / float64(len(shape[i]))
			}
		}
		level := 0.0
		for _, v := range x[n-m:] {
			level += v
		}
		level /= float64(m)
		slope := 0.0
		if trendDamp > 0 && n >= 2*m {
			prev := 0.0
			for _, v := range x[n-2*m : n-m] {
				prev += v
			}
			prev /= float64(m)
			slope = (level - prev) / float64(m)
		}
		out := make([]float64, h)
		// level is centred at n - m/2 - 0.5
		for j := range out {
			dist := float64(j) + float64(m)/2 + 0.5
			tr := 0.0
			if slope != 0 {
				// damped
				phi := trendDamp
				s := 0.0
				p := 1.0
				for q := 0; q < int(dist); q++ {
					p *= phi
					s += p
				}
				tr = slope * s
			}
			l := level + tr
			if mult {
				out[j] = l * idx[j%m]
			} else {
				out[j] = l + idx[j%m]
			}
		}
		return out
	}
}

func combo(agg string, fs ...fn) fn {
	return func(x []float64, h int) []float64 {
		var outs [][]float64
		for _, f := range fs {
			outs = append(outs, f(x, h))
		}
		out := make([]float64, h)
		col := make([]float64, len(fs))
		for j := range out {
			for k := range fs {
				col[k] = outs[k][j]
			}
			if agg == "median" {
				out[j] = median(col)
			} else {
				s := 0.0
				for _, v := range col {
					s += v
				}
				out[j] = s / float64(len(col))
			}
		}
		return out
	}
}

func valErr(f fn, x []float64, origins []int, h int) float64 {
	e := 0.0
	for _, o := range origins {
		tr := x[:len(x)-o]
		te := x[len(x)-o : len(x)-o+h]
		fc := f(tr, h)
		sc, _ := accuracy.Scale(tr, 24)
		sm, _ := accuracy.SMAPE(te, fc)
		ma := 0.0
		for k := range te {
			ma += math.Abs(te[k] - fc[k])
		}
		ma /= float64(h) * sc
		e += sm/18.383 + ma/2.395
	}
	return e
}

func selectBest(origins []int, pool ...fn) fn {
	return func(x []float64, h int) []float64 {
		best, be := 0, math.Inf(1)
		for k, f := range pool {
			if e := valErr(f, x, origins, h); e < be {
				best, be = k, e
			}
		}
		return pool[best](x, h)
	}
}

func selectTop(origins []int, k int, pool ...fn) fn {
	return func(x []float64, h int) []float64 {
		type ie struct {
			i int
			e float64
		}
		var es []ie
		for i, f := range pool {
			es = append(es, ie{i, valErr(f, x, origins, h)})
		}
		sort.Slice(es, func(a, b int) bool { return es[a].e < es[b].e })
		var top []fn
		for _, e := range es[:k] {
			top = append(top, pool[e.i])
		}
		return combo("mean", top...)(x, h)
	}
}

func TestScratch(t *testing.T) {
	cs := []cand{
		{"auto", New(Config{})},
		{"hw A,Ad,A 24", holtwinters.Forecaster{Periods: []int{24}, Spec: &holtwinters.Spec{Trend: holtwinters.DampedTrend, Seasonality: holtwinters.Additive}}},
		{"hw A,N,A 24", holtwinters.Forecaster{Periods: []int{24}, Spec: &holtwinters.Spec{Trend: holtwinters.NoTrend, Seasonality: holtwinters.Additive}}},
		{"hw A,N,M 24", holtwinters.Forecaster{Periods: []int{24}, Spec: &holtwinters.Spec{Trend: holtwinters.NoTrend, Seasonality: holtwinters.Multiplicative}}},
		{"hw A,N,A 24,168", holtwinters.Forecaster{Periods: []int{24, 168}, Spec: &holtwinters.Spec{Trend: holtwinters.NoTrend, Seasonality: holtwinters.Additive}}},
	}
	evalAll(t, cs)
}

func TestPerSeries(t *testing.T) {
	series, _ := m4.LoadHourly("/work/shared/datasets/m4-hourly")
	a := seasonal.SeasonalNaive{Period: 24}
	b := seasonal.SeasonalNaive{Period: 168}
	type r struct {
		id         string
		n          int
		ma, mb     float64
		sa, sb     float64
		per        []int
	}
	var rs []r
	for _, s := range series {
		fa, _ := a.Forecast(s.Train, 48, 0.95)
		fb, _ := b.Forecast(s.Train, 48, 0.95)
		ma, _ := accuracy.MASE(s.Train, s.Test, fa.Mean, 24)
		mb, _ := accuracy.MASE(s.Train, s.Test, fb.Mean, 24)
		sa, _ := accuracy.SMAPE(s.Test, fa.Mean)
		sb, _ := accuracy.SMAPE(s.Test, fb.Mean)
		rs = append(rs, r{s.ID, len(s.Train), ma, mb, sa, sb, seasonal.Detect(s.Train, seasonal.DetectOptions{})})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].mb-rs[i].ma > rs[j].mb-rs[j].ma })
	for _, x := range rs[:25] {
		fmt.Printf("%s n=%d mase24 %.2f mase168 %.2f smape24 %.1f smape168 %.1f per %v\n", x.id, x.n, x.ma, x.mb, x.sa, x.sb, x.per)
	}
	hist := map[string]int{}
	for _, x := range rs {
		hist[fmt.Sprint(x.per)]++
	}
	fmt.Println(hist)
}
