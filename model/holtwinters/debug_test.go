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
	specs := []Spec{
		{Seasonality: Additive, AR1: true, Periods: p},
	}
	names := []string{"ANA", "AAdA", "ANM", "logANA", "sel-aicc", "sel-amse", "snaive"}
	sc := make([]m4Scores, len(names))
	start := time.Now()
	for i := off; i < off+n*step && i < len(train); i += step {
		var fcs []model.Forecast
		var ms []*Model
		for _, s := range specs {
			m, err := FitOptions{Horizon: 24}.Fit(train[i], s)
			if err != nil {
				t.Fatal(err)
			}
			f, err := m.forecast(48, 0.95, 1.3)
			if err != nil {
				t.Fatal(err)
			}
			fcs = append(fcs, f)
			ms = append(ms, m)
		}
		ba, bm := 0, 0
		for j := range ms {
			if ms[j].AICc() < ms[ba].AICc() {
				ba = j
			}
			if ms[j].amseAt() < ms[bm].amseAt() {
				bm = j
			}
		}
		fcs = append(fcs, fcs[ba], fcs[bm], seasonalNaive(train[i], 24, 48, 0.95))
		for j := range fcs {
			sc[j].add(train[i], test[i], fcs[j])
		}
	}
	out := fmt.Sprintf("\n%v\n", time.Since(start))
	for j := range sc {
		out += fmt.Sprintf("%-8s %v\n", names[j], &sc[j])
	}
	t.Log(out)
}
