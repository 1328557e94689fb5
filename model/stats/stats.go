package stats

import "math"

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of the sorted values s by
// linear interpolation between order statistics, R's type 7:
//
//	Q(q) = s[⌊h⌋] + (h − ⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]),  h = q·(len(s)−1)
//
// (0-based). It is NaN for an empty s; q above 1 gives the largest value.
func Quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	if i < 0 {
		return s[0]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// Line is a fitted straight line y ≈ Intercept + Slope·x.
type Line struct {
	Slope, Intercept float64
}

// At evaluates the line at x.
func (l Line) At(x float64) float64 { return l.Intercept + l.Slope*x }

// FitLine fits y[i] ≈ a + b·x(i) by least squares over the i where y[i]
// is finite (NaN or ±Inf values drop out), x(i) = i when x is nil. With
// fewer than two points, or all at one x, the slope is 0 and the
// intercept the mean (NaN without points).
func FitLine(x, y []float64) Line {
	var sx, sy, sxx, sxy, n float64
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		xi := float64(i)
		if x != nil {
			xi = x[i]
		}
		sx += xi
		sy += v
		sxx += xi * xi
		sxy += xi * v
		n++
	}
	if n == 0 {
		return Line{Intercept: math.NaN()}
	}
	den := n*sxx - sx*sx
	if n < 2 || den == 0 {
		return Line{Intercept: sy / n}
	}
	b := (n*sxy - sx*sy) / den
	return Line{Slope: b, Intercept: (sy - b*sx) / n}
}
