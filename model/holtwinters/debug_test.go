package holtwinters

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model"
)

func TestDebugM4(t *testing.T) {
	train := readM4(t, "Hourly-train.csv")
	test := readM4(t, "Hourly-test.csv")
	n, _ := strconv.Atoi(os.Getenv("N"))
	step, _ := strconv.Atoi(os.Getenv("STEP"))
	off, _ := strconv.Atoi(os.Getenv("OFF"))
	p := []int{24, 168}
	fcs := []struct {
		name string
		f    model.Forecaster
	}{
		{"snaive", snaiveForecaster{24}},
		{"ANA", Forecaster{Periods: p, Spec: &Spec{Seasonality: Additive, AR1: true}}},

		{"logANA", Forecaster{Periods: p, Spec: &Spec{Seasonality: Additive, AR1: true, BoxCox: Lambda(0)}}},
	}
	out := "\n"
	for _, fc := range fcs {
		var sc m4Scores
		start := time.Now()
		for i := off; i < off+n*step; i += step {
			f, err := fc.f.Forecast(train[i], 48, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			for k := range f.Mean {
				f.Lower[k] = f.Mean[k] - 1.3*(f.Mean[k]-f.Lower[k])
				f.Upper[k] = f.Mean[k] + 1.3*(f.Upper[k]-f.Mean[k])
			}
			sc.add(train[i], test[i], f)
		}
		out += fmt.Sprintf("%-8s %v %v\n", fc.name, &sc, time.Since(start).Round(time.Millisecond))
	}
	t.Log(out)
}
