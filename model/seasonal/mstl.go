package seasonal

import (
	"fmt"
	"slices"
)

// MSTLOptions tunes MSTL. The zero value is R forecast::mstl's default.
type MSTLOptions struct {
	// SeasonalWindows are the s.window values of the periods, shortest
	// period first; nil means R's 7 + 4·k for the k-th (11, 15, 19, …).
	SeasonalWindows []int
	// Iterate is how many times every period's STL is redone on the
	// series less the other periods' parts; 0 means 2 when several
	// periods are given and 1 for one (as R does for msts and ts input).
	Iterate int
	// Robust runs each STL in robust mode.
	Robust bool
	// Scratch, when not nil, lends the decomposition its working memory
	// (the result is the same and never shares it).
	Scratch *Scratch
}

// MultiDecomposition splits a series additively into a trend, one
// seasonal part per period and a remainder:
// x = Trend + Σᵢ Seasonal[i] + Remainder.
type MultiDecomposition struct {
	// Periods are the periods decomposed, shortest first.
	Periods []int
	// Trend, each Seasonal[i] and Remainder have the input's length.
	Trend     []float64
	Seasonal  [][]float64
	Remainder []float64
}

// MSTL is Bandara, Hyndman and Bergmeir's multiple seasonal STL as R's
// forecast::mstl (8.20) computes it: periods shortest first, those with
// fewer than two cycles in x dropped; for each iteration and each period
// in turn, that period's seasonal part is added back to the series less
// all seasonal parts, re-estimated by STL with its own seasonal window,
// and removed again; the trend is that of the last STL. Missing values
// are interpolated linearly first. It matches R's mstl to 1e-9 relative
// (TestMSTLMatchesR).
//
// It fails with ErrTooShort when no period has two cycles in x.
func MSTL(x []float64, periods []int, opts MSTLOptions) (MultiDecomposition, error) {
	n := len(x)
	iterate := opts.Iterate
	if iterate <= 0 {
		iterate = 1
		if len(periods) > 1 {
			iterate = 2
		}
	}
	var kept []int
	for _, p := range periods {
		if p < 2 {
			return MultiDecomposition{}, fmt.Errorf("period %d: must be at least 2", p)
		}
		if 2*p < n && !slices.Contains(kept, p) {
			kept = append(kept, p)
		}
	}
	slices.Sort(kept)
	if len(kept) == 0 {
		return MultiDecomposition{}, fmt.Errorf("%w: %d observations, periods %v", ErrTooShort, n, periods)
	}
	deseas := Interpolate(x)
	d := MultiDecomposition{Periods: kept, Trend: make([]float64, n), Seasonal: make([][]float64, len(kept)),
		Remainder: make([]float64, n)}
	var work *stlWork
	if opts.Scratch != nil {
		work = opts.Scratch.work(n, kept...)
	} else {
		work = newSTLWork(n, kept...)
	}
	params := make([]stlParams, len(kept))
	for i, p := range kept {
		d.Seasonal[i] = make([]float64, n)
		sw := 7 + 4*(i+1)
		if i < len(opts.SeasonalWindows) && opts.SeasonalWindows[i] > 0 {
			sw = opts.SeasonalWindows[i]
		}
		params[i] = newSTLParams(p, STLOptions{SeasonalWindow: sw, Robust: opts.Robust})
	}
	for range iterate {
		for i := range kept {
			s := d.Seasonal[i]
			for t := range deseas {
				deseas[t] += s[t]
			}
			work.run(deseas, params[i], d.Trend, s)
			for t := range deseas {
				deseas[t] -= s[t]
			}
		}
	}
	for t := range x {
		d.Remainder[t] = deseas[t] - d.Trend[t]
		if !finite(x[t]) {
			d.Remainder[t] = x[t]
		}
	}
	return d, nil
}

// Adjusted returns the seasonally adjusted series, trend plus remainder
// (x less every seasonal part), and the trend alone where x is missing.
func (d MultiDecomposition) Adjusted() []float64 {
	out := make([]float64, len(d.Trend))
	for t := range out {
		r := d.Remainder[t]
		if !finite(r) {
			r = 0
		}
		out[t] = d.Trend[t] + r
	}
	return out
}

// SeasonalForecast returns the seasonal parts carried h steps past the
// end: each period's last cycle repeated, summed over the periods (what
// R's forecast.mstl adds to the forecast of the adjusted series).
func (d MultiDecomposition) SeasonalForecast(h int) []float64 {
	out := make([]float64, h)
	n := len(d.Trend)
	for i, p := range d.Periods {
		s := d.Seasonal[i]
		for j := range out {
			out[j] += s[n-p+j%p]
		}
	}
	return out
}
