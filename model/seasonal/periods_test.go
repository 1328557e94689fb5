package seasonal

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestClockPeriods(t *testing.T) {
	for _, tc := range []struct {
		step time.Duration
		want []int
	}{
		{time.Hour, []int{24, 168}},
		{30 * time.Minute, []int{48, 336}},
		{time.Minute, []int{1440, 10080}},
		{5 * time.Minute, []int{288, 2016}},
		{57 * time.Second, []int{1516, 10612}},
		{7 * time.Hour, nil}, // 3.43 steps a day: not within 1%
		{12 * time.Hour, nil},
		{0, nil},
		{-time.Minute, nil},
	} {
		if got := ClockPeriods(tc.step); !slices.Equal(got, tc.want) {
			t.Errorf("ClockPeriods(%v) = %v, want %v", tc.step, got, tc.want)
		}
	}
}

func TestInterpolate(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct{ in, want []float64 }{
		{[]float64{1, nan, 3}, []float64{1, 2, 3}},
		{[]float64{nan, nan, 2, nan, nan, 5, nan}, []float64{2, 2, 2, 3, 4, 5, 5}},
		{[]float64{1, math.Inf(1), 2}, []float64{1, 1.5, 2}},
		{[]float64{4}, []float64{4}},
	} {
		if got := Interpolate(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Interpolate(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := Interpolate([]float64{nan, nan}); !math.IsNaN(got[0]) {
		t.Errorf("all missing: %v", got)
	}
}

// workWeek is a business-hours series: days of dayLen steps, weeks of
// days days, the first day busier and the last quieter.
func workWeek(dayLen, days, weeks int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	x := make([]float64, dayLen*days*weeks)
	for i := range x {
		v := 20 + 100*math.Sin(math.Pi*float64(i%dayLen)/float64(dayLen))
		switch (i / dayLen) % days {
		case 0:
			v *= 1.3
		case days - 1:
			v *= 0.6
		}
		x[i] = v * (1 + 0.08*rng.NormFloat64())
	}
	return x
}

// Detect finds days that are not the clock's and weeks that are not
// seven days; the broad ACF peak of a 169-step day no longer reads 168.
func TestDetectWorkingWeeks(t *testing.T) {
	for _, tc := range []struct {
		dayLen, days int
		want         []int
	}{
		{24, 5, []int{24, 120}},
		{24, 7, []int{24, 168}},
		{169, 5, []int{169, 845}},
		{169, 7, []int{169, 1183}},
	} {
		x := workWeek(tc.dayLen, tc.days, 5, 1)
		if got := Detect(x, DetectOptions{}); !slices.Equal(got, tc.want) {
			t.Errorf("day %d, %d-day week: Detect = %v, want %v", tc.dayLen, tc.days, got, tc.want)
		}
	}
}

func TestWeekOf(t *testing.T) {
	for _, days := range []int{5, 6, 7} {
		x := workWeek(24, days, 6, 3)
		if got := WeekOf(x, 24); got != 24*days {
			t.Errorf("%d-day week: WeekOf = %d, want %d", days, got, 24*days)
		}
	}
	if got := WeekOf(make([]float64, 100), 24); got != 0 {
		t.Errorf("too short: %d", got)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	noise := make([]float64, 24*30)
	for i := range noise {
		noise[i] = rng.NormFloat64()
	}
	if got := WeekOf(noise, 24); got != 168 {
		t.Errorf("no week in noise: %d, want the calendar's 168", got)
	}
}

// partialSort puts the requested order statistics in place when the
// ranks are given in increasing order, as psort promises.
func TestPartialSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{2, 3, 11, 12, 50, 301} {
		for trial := 0; trial < 20; trial++ {
			a := make([]float64, n)
			for i := range a {
				a[i] = math.Round(rng.NormFloat64() * 10)
			}
			sorted := slices.Clone(a)
			slices.Sort(sorted)
			ind := []int{1 + rng.IntN(n), 1 + rng.IntN(n)}
			slices.Sort(ind)
			partialSort(a, ind)
			for _, k := range ind {
				if a[k-1] != sorted[k-1] {
					t.Fatalf("n %d ranks %v: a[%d] = %v, want %v", n, ind, k-1, a[k-1], sorted[k-1])
				}
			}
		}
	}
}

func TestMSTLForecastParts(t *testing.T) {
	n := 24 * 30
	x := make([]float64, n)
	for i := range x {
		x[i] = 100 + 10*math.Sin(2*math.Pi*float64(i)/24) + 5*math.Cos(2*math.Pi*float64(i)/168)
	}
	x[100] = math.NaN()
	d, err := MSTL(x, []int{168, 24, 24}, MSTLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Periods, []int{24, 168}) {
		t.Errorf("periods %v", d.Periods)
	}
	adj := d.Adjusted()
	if math.IsNaN(adj[100]) {
		t.Error("adjusted series keeps the gap")
	}
	for i := range x {
		if i == 100 {
			continue
		}
		s := d.Seasonal[0][i] + d.Seasonal[1][i]
		if math.Abs(adj[i]+s-x[i]) > 1e-9 {
			t.Fatalf("adjusted + seasonal ≠ x at %d", i)
		}
	}
	f := d.SeasonalForecast(200)
	for j := range f {
		want := d.Seasonal[0][n-24+j%24] + d.Seasonal[1][n-168+j%168]
		if math.Abs(f[j]-want) > 1e-12 {
			t.Fatalf("seasonal forecast step %d: %v, want %v", j, f[j], want)
		}
	}
	if _, err := MSTL(x[:40], []int{24}, MSTLOptions{}); err == nil {
		t.Error("40 values, period 24: want ErrTooShort")
	}
	if _, err := MSTL(x, []int{1}, MSTLOptions{}); err == nil {
		t.Error("period 1 accepted")
	}
}
