package holtwinters

import (
	"testing"
)

func TestDebugEvals(t *testing.T) {
	train := readM4(t, "Hourly-train.csv")
	test := readM4(t, "Hourly-test.csv")
	var sc m4Scores
	for i := 0; i < 414; i += 1 {
		f, err := Forecaster{Periods: []int{24, 168}}.Forecast(train[i], 48, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		sc.add(train[i], test[i], f)
	}
	t.Log(debugEvals, &sc)
}
