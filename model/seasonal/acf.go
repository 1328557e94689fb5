package seasonal

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// ACF returns the sample autocorrelation of x at lags 0..maxLag, computed
// as R's acf does:
//
//	r(k) = Σ_{t=k}^{n-1} (x_t − x̄)(x_{t−k} − x̄) / Σ_t (x_t − x̄)²
//
// through the FFT of the zero-padded, centred series, so it costs
// O(n log n) whatever maxLag is. Missing values (NaN, ±Inf) count as the
// mean.
// maxLag is clipped to len(x)−1. A constant or empty series has no
// autocorrelation and yields nil.
func ACF(x []float64, maxLag int) []float64 {
	n := len(x)
	if n < 2 || maxLag < 0 {
		return nil
	}
	if maxLag > n-1 {
		maxLag = n - 1
	}
	mean, count := 0.0, 0
	for _, v := range x {
		if finite(v) {
			mean += v
			count++
		}
	}
	if count == 0 {
		return nil
	}
	mean /= float64(count)
	m := fftLen(2 * n)
	padded := make([]float64, m)
	for i, v := range x {
		if finite(v) {
			padded[i] = v - mean
		}
	}
	fft := fourier.NewFFT(m)
	coeff := fft.Coefficients(nil, padded)
	for i, c := range coeff {
		coeff[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	acov := fft.Sequence(nil, coeff)
	if acov[0] <= 0 || math.IsNaN(acov[0]) {
		return nil
	}
	r := make([]float64, maxLag+1)
	for k := range r {
		r[k] = acov[k] / acov[0]
	}
	return r
}

// fftLen returns the smallest length ≥ n whose only prime factors are 2, 3
// and 5, where gonum's FFT is fastest.
func fftLen(n int) int {
	for m := n; ; m++ {
		k := m
		for _, p := range []int{2, 3, 5} {
			for k%p == 0 {
				k /= p
			}
		}
		if k == 1 {
			return m
		}
	}
}
