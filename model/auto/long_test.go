package auto

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLongHistories measures auto where M4 Hourly and the trace
// evaluation cannot: on histories longer than M4's longest (960 points),
// here the service's default of 28 days at 30 minutes. It forecasts the
// NYC taxi trace's next 6 hours (12 steps) from 28-day histories at
// origins 9 hours apart (so they fall at every time of day), as a pool's
// refits would, and prints for the first and the second half of the
// origins the MAE relative to seasonal naive (the same time a week
// before), summed over the origins and as the geometric mean of each
// origin's ratio. The time-saving constants of
// pool.go (minTail, mstlIterations, fitStall) were checked on the first
// half.
//
//	PREWARM_LONG=1 go test ./model/auto -run TestLongHistories -v
func TestLongHistories(t *testing.T) {
	if os.Getenv("PREWARM_LONG") == "" {
		t.Skip("set PREWARM_LONG: forecasts about 60 long histories")
	}
	x := nycTaxi(t)
	const n, h, every, week = 28 * 48, 12, 18, 7 * 48
	f := New(Config{Periods: []int{48, week}})
	var autoErr, naiveErr, logRatio [2]float64
	var count [2]int
	origins := 0
	for o := n; o+h <= len(x); o += every {
		origins++
	}
	k := 0
	for o := n; o+h <= len(x); o += every {
		fc, err := f.Forecast(x[o-n:o], h, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		half := 0
		if k >= origins/2 {
			half = 1
		}
		a, s := 0.0, 0.0
		for j := range h {
			a += math.Abs(x[o+j] - fc.Mean[j])
			s += math.Abs(x[o+j] - x[o+j-week])
		}
		autoErr[half] += a
		naiveErr[half] += s
		logRatio[half] += math.Log(a / s)
		count[half]++
		k++
	}
	for half, name := range []string{"first", "second"} {
		fmt.Printf("%s half, %d origins: MAE against seasonal naive %.4f summed, %.4f geometric mean\n",
			name, count[half], autoErr[half]/naiveErr[half], math.Exp(logRatio[half]/float64(count[half])))
	}
}

// nycTaxi reads the NYC taxi trace's values (30-minute counts).
func nycTaxi(t *testing.T) []float64 {
	dir := os.Getenv("PREWARM_DATASETS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "datasets")
	}
	path := filepath.Join(dir, "traces", "nyc_taxi.csv")
	file, err := os.Open(path)
	if err != nil {
		t.Skipf("NYC taxi trace not found at %s (set PREWARM_DATASETS): %v", path, err)
	}
	defer file.Close()
	rows, err := csv.NewReader(file).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	for i, row := range rows[1:] {
		v, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+2, err)
		}
		x = append(x, v)
	}
	return x
}
