package holtwinters

import "math"

// invert maps a model-scale value back to the original scale.
func (m *Model) invert(z float64) float64 {
	if m.spec.BoxCox == nil {
		return z
	}
	return invBoxCox(z, *m.spec.BoxCox)
}

// boxCox is (y^λ − 1)/λ, or log y for λ = 0.
func boxCox(y, lambda float64) float64 {
	if lambda == 0 {
		return math.Log(y)
	}
	return (math.Pow(y, lambda) - 1) / lambda
}

// invBoxCox inverts boxCox; values below the transform's range map to 0.
func invBoxCox(z, lambda float64) float64 {
	if lambda == 0 {
		return math.Exp(z)
	}
	b := lambda*z + 1
	if b <= 0 {
		if lambda > 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Pow(b, 1/lambda)
}
