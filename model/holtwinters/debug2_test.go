package holtwinters

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// Pseudo-holdout calibration on the training data only.
func TestDebugCalib(t *testing.T) {
	train := readM4(t, "Hourly-train.csv")
	n, _ := strconv.Atoi(os.Getenv("N"))
	step, _ := strconv.Atoi(os.Getenv("STEP"))
	off, _ := strconv.Atoi(os.Getenv("OFF"))
	mults := []float64{1, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4}
	f := Forecaster{Periods: []int{24, 168}, Spec: &Spec{Seasonality: Additive, AR1: true}}
	if os.Getenv("LOG") != "" {
		f.Spec.BoxCox = Lambda(0)
	}
	sc := make([]m4Scores, len(mults))
	for i := off; i < off+n*step && i < len(train); i += step {
		y := train[i]
		fit, tst := y[:len(y)-48], y[len(y)-48:]
		fc, err := f.Forecast(fit, 48, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range mults {
			g := fc
			g.Lower = make([]float64, 48)
			g.Upper = make([]float64, 48)
			for k := range 48 {
				g.Lower[k] = g.Mean[k] - c*(fc.Mean[k]-fc.Lower[k])
				g.Upper[k] = g.Mean[k] + c*(fc.Upper[k]-fc.Mean[k])
			}
			sc[j].add(fit, tst, g)
		}
	}
	out := "\n"
	for j, c := range mults {
		out += fmt.Sprintf("x%.2f %v\n", c, &sc[j])
	}
	t.Log(out)
}
