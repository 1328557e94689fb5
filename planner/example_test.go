package planner_test

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/planner"
)

// A forecast of a morning rise turns into a schedule that asks for the
// instances one boot delay before they are needed.
func ExampleForecastPlan() {
	c := planner.DefaultConfig()
	c.Fleet.RPSPerInstance = 10 // req/s per GPU within the latency SLO
	c.Fleet.BootDelay = 10 * time.Minute
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	upper := []float64{15, 15, 60, 60} // P90 demand per half hour, req/s
	fc := planner.DemandForecast{Start: start, Step: 30 * time.Minute,
		Forecast: model.Forecast{Mean: upper, Lower: upper, Upper: upper, Level: c.ForecastLevel()}}
	sched, err := planner.ForecastPlan(start, fc, c)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range sched {
		fmt.Printf("%s %d %s\n", st.At.Format("15:04"), st.Desired, st.Reason)
	}
	// Output:
	// 09:00 2 forecast 15 req/s for Mon 2 Mar 09:00 (its 90th percentile) needs 2
	// 09:50 8 forecast 60 req/s for Mon 2 Mar 10:00 (its 90th percentile) needs 8 (pre-warm 10m)
}
