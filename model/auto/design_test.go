package auto

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The clock's day and week are always the first season; detection adds,
// an explicitly empty Periods turns both off.
func TestSeasons(t *testing.T) {
	x := demand(24*42, 21)
	noise := make([]float64, 24*42)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range noise {
		noise[i] = 10 + rng.NormFloat64()
	}
	tests := []struct {
		name  string
		cfg   Config
		x     []float64
		first season
		none  bool
	}{
		{"step gives the clock", Config{Step: time.Hour}, noise, season{24, 168, "clock"}, false},
		{"periods are the clock", Config{Periods: []int{24, 168}}, noise, season{24, 168, "clock"}, false},
		{"one period: a 7-day week", Config{Periods: []int{24}}, noise, season{24, 168, "clock"}, false},
		{"half-hourly step", Config{Step: 30 * time.Minute}, demand(48*42, 3), season{48, 336, "clock"}, false},
		{"detection alone", Config{}, x, season{24, 168, "detected"}, false},
		{"explicitly none", Config{Periods: []int{}}, x, season{}, true},
		{"noise, no step", Config{}, noise, season{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := (&forecaster{cfg: tc.cfg}).seasons(tc.x)
			if tc.none {
				if len(got) != 0 {
					t.Fatalf("seasons %+v, want none", got)
				}
				return
			}
			if len(got) == 0 || got[0] != tc.first {
				t.Fatalf("seasons %+v, want %+v first", got, tc.first)
			}
		})
	}
}

// A detected business day (169 five-minute steps) with a 5-day week is
// a second season beside the clock's 288 and 2016.
func TestSeasonsFindAWorkingWeek(t *testing.T) {
	const day, days = 169, 5
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, day*days*5)
	for i := range x {
		v := 20 + 100*math.Sin(math.Pi*float64(i%day)/day)
		switch (i / day) % days {
		case 0:
			v *= 1.3
		case days - 1:
			v *= 0.6
		}
		x[i] = v * (1 + 0.08*rng.NormFloat64())
	}
	got := (&forecaster{cfg: Config{Step: 5 * time.Minute}}).seasons(x)
	want := season{day, day * days, "detected"}
	if !slices.Contains(got, want) {
		t.Errorf("seasons %+v lack %+v", got, want)
	}
	if got[0].from != "clock" || got[0].day != 288 {
		t.Errorf("first season %+v, want the clock's day of 288 steps", got[0])
	}
}

func TestDayAndWeek(t *testing.T) {
	x := demand(24*60, 4)
	for _, tc := range []struct {
		periods   []int
		day, week int
	}{
		{[]int{24, 168}, 24, 168},
		{[]int{2, 24, 168}, 24, 168},
		{[]int{24, 168, 672}, 24, 168},
		{[]int{169, 338, 1014}, 169, 1014},
		{[]int{24, 120}, 24, 120},
	} {
		if s := dayAndWeek(x, tc.periods); s.day != tc.day || s.week != tc.week {
			t.Errorf("%v: day %d week %d, want %d and %d", tc.periods, s.day, s.week, tc.day, tc.week)
		}
	}
}

// The runner-up is averaged in only when it scores within closeness of
// the best.
func TestChooseCombinesOnlyClose(t *testing.T) {
	pool := make([]candidate, 3)
	for _, tc := range []struct {
		scores []float64
		want   []int
	}{
		{[]float64{1, 1.2, 3}, []int{0, 1}},
		{[]float64{1, 1 + closeness + 0.01, 3}, []int{0}},
		{[]float64{2, 1, 1.1}, []int{1, 2}},
		{[]float64{math.Inf(1), 1, math.Inf(1)}, []int{1}},
	} {
		v := &validation{pool: pool, score: tc.scores}
		if got := v.choose(2); !slices.Equal(got, tc.want) {
			t.Errorf("scores %v: chose %v, want %v", tc.scores, got, tc.want)
		}
	}
	v := &validation{pool: pool[:1], score: []float64{1}}
	if got := v.choose(2); !slices.Equal(got, []int{0}) {
		t.Errorf("one candidate: %v", got)
	}
}

// Validation looks one and two weeks back besides the latest horizons,
// and never deeper than the clock's candidates allow.
func TestValidationOrigins(t *testing.T) {
	cand := func(need int, detected bool) candidate { return candidate{need: need, detected: detected} }
	tests := []struct {
		name    string
		n, h    int
		week    int
		pool    []candidate
		origins []int
		kept    int
	}{
		{"hourly, two days ahead", 900, 48, 168, []candidate{cand(1, false), cand(337, false)},
			[]int{48, 96, 144, 192, 240, 288, 168, 336}, 2},
		{"weeks too deep for the weekly candidates", 650, 48, 168, []candidate{cand(1, false), cand(337, false)},
			[]int{48, 96, 144, 192, 240, 288, 168}, 2},
		{"a week ahead keeps the weekly candidates", 1008, 168, 168, []candidate{cand(1, false), cand(337, false)},
			[]int{168, 336, 504}, 2},
		{"a detected season's candidates give way", 500, 24, 0, []candidate{cand(1, false), cand(400, true)},
			[]int{24, 48, 72, 96, 120, 144}, 1},
		{"too short for the clock's: two origins", 100, 24, 0, []candidate{cand(3, false), cand(80, false)},
			[]int{24, 48}, 1},
		{"too short for anything", 5, 10, 0, []candidate{cand(1, false)}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			origins, kept := validationOrigins(tc.n, tc.h, tc.week, tc.pool, 6)
			if !slices.Equal(origins, tc.origins) || len(kept) != tc.kept {
				t.Errorf("origins %v kept %d, want %v and %d", origins, len(kept), tc.origins, tc.kept)
			}
		})
	}
}

// The pool holds the design's members for hourly data with four weeks.
func TestPoolMembers(t *testing.T) {
	x := demand(24*35, 8)
	var names []string
	for _, c := range pool([]season{{24, 168, "clock"}}, x, 48) {
		names = append(names, c.name)
	}
	all := strings.Join(names, "; ")
	for _, want := range []string{"naive", "ets(A,N,N)", "ets(A,Ad,N)", "snaive(24)", "snaive(168)",
		"ets(A,N,M)[24]", "ets(A,Ad,A)[24]", "ets(A,N,A)[24,168]+ar1", "stl[24]+ets(", "mstl[24 168]+ets("} {
		if !strings.Contains(all, want) {
			t.Errorf("pool lacks %q: %s", want, all)
		}
	}
}

// A burst yesterday does not come back in today's forecast: the
// forecast with it stays within a tenth of the burst's excess of the
// forecast without it.
func TestBurstDoesNotEcho(t *testing.T) {
	clean := demand(24*28, 12)
	n := len(clean)
	burst := n - 24 + 14 // the history's last day, 14:00 and 15:00
	x := slices.Clone(clean)
	x[burst] *= 6
	x[burst+1] *= 6
	excess := x[burst] - clean[burst]
	f := New(Config{Step: time.Hour})
	with, err := f.Forecast(x, 24, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	without, err := f.Forecast(clean, 24, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	at := burst + 24 - n // the same hour in the forecast
	if d := math.Abs(with.Mean[at] - without.Mean[at]); d > 0.1*excess {
		t.Errorf("the burst of +%.0f moved the forecast of the same hour by %.1f (%s vs %s)", excess, d, with.Method, without.Method)
	}
}

func TestDespike(t *testing.T) {
	base := demand(24*28, 13)
	n := len(base)
	t.Run("burst replaced", func(t *testing.T) {
		x := slices.Clone(base)
		x[n-100] *= 5
		y, k := despike(x, 24, 168)
		if k != 1 || math.Abs(y[n-100]-base[n-100]) > 0.2*base[n-100] {
			t.Errorf("replaced %d, value %.1f (was %.1f before the burst)", k, y[n-100], base[n-100])
		}
	})
	t.Run("weekly event kept", func(t *testing.T) {
		x := slices.Clone(base)
		for t := 50; t < n; t += 168 {
			x[t] *= 5
		}
		if _, k := despike(x, 24, 168); k != 0 {
			t.Errorf("replaced %d steps of an event every week", k)
		}
	})
	t.Run("level shift at the end kept", func(t *testing.T) {
		x := slices.Clone(base)
		for t := n - 10; t < n; t++ {
			x[t] *= 5
		}
		if _, k := despike(x, 24, 168); k != 0 {
			t.Errorf("replaced %d steps of the latest surge", k)
		}
	})
	t.Run("long episode kept", func(t *testing.T) {
		x := slices.Clone(base)
		for t := n - 200; t < n-190; t++ {
			x[t] *= 5
		}
		if _, k := despike(x, 24, 168); k != 0 {
			t.Errorf("replaced %d steps of a 10-hour episode", k)
		}
	})
	t.Run("irregular peak hour kept", func(t *testing.T) {
		x := slices.Clone(base)
		rng := rand.New(rand.NewPCG(9, 9))
		for d := 0; d < n/24; d++ {
			x[d*24+18] *= 1 + 4*rng.Float64()
		}
		if _, k := despike(x, 24, 168); k > 2 {
			t.Errorf("replaced %d steps of a peak hour that varies from day to day", k)
		}
	})
	t.Run("no period", func(t *testing.T) {
		if y, k := despike(base, 0, 0); k != 0 || &y[0] != &base[0] {
			t.Errorf("despiked without a period")
		}
	})
}

// The interval widens with the lead time and at the noisy time of day.
func TestIntervalProfile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	n := 24 * 42
	x := make([]float64, n)
	level := 100.0
	for i := range x {
		hour := i % 24
		level += 0.5 * rng.NormFloat64() // a random walk: errors grow with the lead
		noise := 1.0
		if hour >= 12 && hour < 18 {
			noise = 6 // the afternoon is far less certain
		}
		x[i] = level + 20*math.Sin(2*math.Pi*float64(hour)/24) + noise*rng.NormFloat64()
	}
	fc, err := New(Config{Step: time.Hour}).Forecast(x, 48, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	width := func(j int) float64 { return fc.Upper[j] - fc.Lower[j] }
	// Step j falls at hour (n+j) mod 24 = j mod 24 here.
	// 14:00 is an earlier lead than 22:00: only the time of day can make
	// it the wider.
	if afternoon, night := width(14), width(22); afternoon < 1.3*night {
		t.Errorf("width at 14:00 %.1f, at 22:00 %.1f: want the afternoon's clearly wider", afternoon, night)
	}
	if late, early := width(24+3), width(3); late <= early {
		t.Errorf("width at 03:00 tomorrow %.1f not above today's %.1f", late, early)
	}
	samples := []errorSample{}
	for j := 0; j < 10; j++ {
		for k := 0; k < 5; k++ {
			samples = append(samples, errorSample{lead: j, abs: math.Sqrt(float64(j + 1))})
		}
	}
	g := leadProfile(samples, 10)
	if math.Abs(g[9]/g[0]-math.Sqrt(10)) > 1e-9 {
		t.Errorf("lead profile %v, want √(j+1)", g)
	}
}
