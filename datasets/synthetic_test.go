package datasets

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// quiet returns the default generator without noise, trend or flash
// crowds: only the daily and weekly cycle.
func quiet() Synthetic {
	g := DefaultSynthetic()
	g.Noise, g.TrendPerWeek, g.FlashCrowdsPerWeek = 0, 0, 0
	return g
}

func within(got, want, relTol float64) bool {
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

// TestSyntheticCycle checks the noise-free level at chosen hours against
// the formula in the Synthetic doc: trough 15% of 200 = 30 at night, 200 in
// weekday working hours, a 12% lunch dip, 35% of peak on weekends and
// holidays, all in the configured time zone.
func TestSyntheticCycle(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("time zone database unavailable: %v", err)
	}
	tests := []struct {
		name   string
		at     string
		change func(*Synthetic)
		want   float64
	}{
		{name: "weekday night", at: "2024-01-03T03:00:00Z", want: 30},
		{name: "weekday afternoon", at: "2024-01-03T15:00:00Z", want: 200},
		{name: "lunch dip", at: "2024-01-03T12:30:00Z", want: 30 + 170*0.88},
		{name: "after midnight", at: "2024-01-04T00:30:00Z", want: 30},
		// BusyFrom and BusyUntil are the midpoints of the morning rise and
		// the evening fall.
		{name: "morning rise", at: "2024-01-03T08:00:00Z", want: 115},
		{name: "evening fall", at: "2024-01-03T20:00:00Z", want: 115},
		{name: "saturday afternoon", at: "2024-01-06T15:00:00Z", want: 70},
		{name: "sunday afternoon", at: "2024-01-07T15:00:00Z", want: 70},
		{name: "sunday night", at: "2024-01-07T03:00:00Z", want: 30},
		{name: "holiday on a wednesday", at: "2024-12-25T15:00:00Z", want: 70,
			change: func(g *Synthetic) { g.Holidays = []time.Time{mustTime(t, "2024-12-25T00:00:00Z")} }},
		{name: "not the holiday", at: "2024-12-26T15:00:00Z", want: 200,
			change: func(g *Synthetic) { g.Holidays = []time.Time{mustTime(t, "2024-12-25T00:00:00Z")} }},
		// 15:00 UTC is 10:00 in New York, 20:00 UTC is 15:00 there.
		{name: "new york morning", at: "2024-01-03T20:00:00Z", want: 200,
			change: func(g *Synthetic) { g.Location = ny }},
		{name: "new york night", at: "2024-01-03T07:00:00Z", want: 30,
			change: func(g *Synthetic) { g.Location = ny }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := quiet()
			if tt.change != nil {
				tt.change(&g)
			}
			s := g.Generate(mustTime(t, tt.at), time.Minute, 1)
			if got := s.Values[0]; !within(got, tt.want, 0.005) {
				t.Errorf("level %.3f, want %.3f ±0.5%%", got, tt.want)
			}
		})
	}
}

func TestSyntheticTrend(t *testing.T) {
	g := quiet()
	g.TrendPerWeek = 0.05
	start := mustTime(t, "2024-01-03T15:00:00Z") // a Wednesday
	s := g.Generate(start, time.Hour, 3*7*24+1)
	for w, want := range []float64{200, 210, 220.5, 231.525} {
		if got := s.Values[w*7*24]; !within(got, want, 0.005) {
			t.Errorf("week %d: %.2f, want %.2f", w, got, want)
		}
	}
}

// TestSyntheticReproducible checks that a seed fixes the series, that a
// longer series starts with the shorter one, and that seeds differ.
func TestSyntheticReproducible(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := DefaultSynthetic()
	g.FlashCrowdsPerWeek = 5
	a := g.Generate(start, 5*time.Minute, 2000)
	b := g.Generate(start, 5*time.Minute, 2000)
	long := g.Generate(start, 5*time.Minute, 5000)
	if !slices.Equal(a.Values, b.Values) {
		t.Error("same seed, different series")
	}
	if !slices.Equal(a.Values, long.Values[:2000]) {
		t.Error("a longer series does not start with the shorter one")
	}
	g.Seed++
	if c := g.Generate(start, 5*time.Minute, 2000); slices.Equal(a.Values, c.Values) {
		t.Error("different seeds, same series")
	}
	if a.Name != "synthetic" || a.Step != 5*time.Minute || !a.Start.Equal(start) || a.Len() != 2000 || a.Index {
		t.Errorf("series header %q %v %v %d %v", a.Name, a.Start, a.Step, a.Len(), a.Index)
	}
}

// TestSyntheticNoise checks the noise's spread and mean against its
// parameters over eight weeks at 5-minute steps.
func TestSyntheticNoise(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := quiet()
	g.Noise = 0.12
	noisy := g.Generate(start, 5*time.Minute, 8*7*24*12)
	clean := quiet().Generate(start, 5*time.Minute, noisy.Len())
	var logs, ratios []float64
	for i := range noisy.Values {
		r := noisy.Values[i] / clean.Values[i]
		ratios = append(ratios, r)
		logs = append(logs, math.Log(r))
	}
	_, sd := meanSD(logs)
	mean, _ := meanSD(ratios)
	if !within(sd, 0.12, 0.15) {
		t.Errorf("sd of log noise %.4f, want 0.12 ±15%%", sd)
	}
	if !within(mean, 1, 0.03) {
		t.Errorf("mean noise multiplier %.4f, want 1 ±3%%", mean)
	}
	// Correlated noise: neighbours one step apart correlate at about
	// exp(-5/20) = 0.78.
	if acf := autocorrelation(logs, 1); !within(acf, math.Exp(-0.25), 0.1) {
		t.Errorf("lag-1 autocorrelation %.3f, want %.3f ±10%%", acf, math.Exp(-0.25))
	}
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// TestSyntheticFlashCrowds counts the spikes over a year: a Poisson process
// of 1 a week gives 52 ± 7.
func TestSyntheticFlashCrowds(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := quiet()
	g.FlashCrowdsPerWeek = 1
	const step = 2 * time.Minute
	n := int(52 * week / step)
	spiky := g.Generate(start, step, n)
	clean := quiet().Generate(start, step, n)
	// A crowd is a run of raised steps whose peak raises demand by > 30%.
	crowds, runPeak, maxRatio := 0, 0.0, 0.0
	for i := range spiky.Values {
		r := spiky.Values[i] / clean.Values[i]
		maxRatio = math.Max(maxRatio, r)
		if r > 1.01 {
			runPeak = math.Max(runPeak, r)
			continue
		}
		if runPeak > 1.3 {
			crowds++
		}
		runPeak = 0
	}
	if crowds < 30 || crowds > 75 {
		t.Errorf("%d flash crowds in 52 weeks, want about 52", crowds)
	}
	if maxRatio < 2 || maxRatio > 1+2*(g.FlashCrowdFactor-1) {
		t.Errorf("largest flash crowd multiplies demand by %.2f, want between 2 and %.0f", maxRatio, 1+2*(g.FlashCrowdFactor-1))
	}
	t.Logf("%d flash crowds, largest ×%.2f", crowds, maxRatio)

	// A 20-minute crowd still shows in hourly means.
	hourly := g.Generate(start, time.Hour, 52*7*24)
	hourlyClean := quiet().Generate(start, time.Hour, 52*7*24)
	seen := 0
	for i := range hourly.Values {
		if hourly.Values[i] > 1.1*hourlyClean.Values[i] {
			seen++
		}
	}
	if seen < 30 {
		t.Errorf("only %d hours raised by a flash crowd at an hourly step", seen)
	}
}

// TestSyntheticBursts finds every burst of BurstySynthetic over two weeks
// per minute, noise off: one per two-hour grid point, starting within ±30
// minutes of it, lasting 5 to 12 minutes, at 4 to 5 times the demand
// without bursts. Partial minutes at a burst's edges read as smaller
// factors, so whole minutes are judged by their interior.
func TestSyntheticBursts(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	quietBursts := func() Synthetic {
		g := quiet()
		b := BurstySynthetic()
		g.BurstEvery, g.BurstJitter, g.BurstMin, g.BurstMax = b.BurstEvery, b.BurstJitter, b.BurstMin, b.BurstMax
		g.BurstFactorMin, g.BurstFactorMax = b.BurstFactorMin, b.BurstFactorMax
		return g
	}
	g := quietBursts()
	if err := g.validate(); err != nil {
		t.Fatal(err)
	}
	const n = 14 * 24 * 60
	bursty := g.Generate(start, time.Minute, n)
	clean := quiet().Generate(start, time.Minute, n)
	type run struct{ from, to int } // minutes [from, to) raised
	var runs []run
	var peaks []float64
	for i := 0; i < n; i++ {
		if bursty.Values[i] <= clean.Values[i]*(1+1e-9) {
			continue
		}
		r := run{from: i}
		peak := 0.0
		for i < n && bursty.Values[i] > clean.Values[i]*(1+1e-9) {
			peak = math.Max(peak, bursty.Values[i]/clean.Values[i])
			i++
		}
		r.to = i
		runs = append(runs, r)
		peaks = append(peaks, peak)
	}
	// 169 grid points from the first midnight to the last; the bursts of
	// the first and the last may fall partly outside the two weeks.
	if len(runs) < 14*12-1 || len(runs) > 14*12+1 {
		t.Fatalf("%d bursts in 14 days, want one per 2-hour grid point (168 ± 1)", len(runs))
	}
	for k, r := range runs {
		if r.from == 0 || r.to == n {
			continue // cut by the series' ends
		}
		grid := int(math.Round(float64(r.from)/120)) * 120
		if off := r.from - grid; off < -31 || off > 30 {
			t.Errorf("burst %d starts at minute %d, %d min from its grid point", k, r.from, off)
		}
		if d := r.to - r.from; d < 5 || d > 13 { // 5-12 min, plus a partial minute
			t.Errorf("burst %d raises %d minutes, want 5 to 13", k, d)
		}
		if peaks[k] < 4-1e-9 || peaks[k] > 5+1e-9 {
			t.Errorf("burst %d multiplies demand by %.3f, want 4 to 5", k, peaks[k])
		}
	}
	// The same bursts at the start of a longer series; none without them.
	longer := g.Generate(start, time.Minute, 2*n)
	if !slices.Equal(longer.Values[:n], bursty.Values) {
		t.Error("a longer series does not begin with the shorter one's bursts")
	}
	g.BurstEvery = 0
	if none := g.Generate(start, time.Minute, n); !slices.Equal(none.Values, clean.Values) {
		t.Error("BurstEvery 0 still changes demand")
	}
}

func TestSyntheticValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Synthetic)
		err    string
	}{
		{name: "default", change: func(*Synthetic) {}},
		{name: "negative peak", change: func(g *Synthetic) { g.PeakRPS = -1 }, err: "PeakRPS -1 must be ≥ 0"},
		{name: "NaN peak", change: func(g *Synthetic) { g.PeakRPS = math.NaN() }, err: "PeakRPS NaN must be ≥ 0"},
		{name: "trough above 1", change: func(g *Synthetic) { g.TroughRatio = 1.5 }, err: "TroughRatio 1.5 must be in [0, 1]"},
		{name: "weekend below trough", change: func(g *Synthetic) { g.WeekendRatio = 0.1 }, err: "WeekendRatio 0.1 must be in [TroughRatio, 1]"},
		{name: "busy hours reversed", change: func(g *Synthetic) { g.BusyFrom, g.BusyUntil = 20, 8 }, err: "busy hours 20-8"},
		{name: "trend -100%", change: func(g *Synthetic) { g.TrendPerWeek = -1 }, err: "TrendPerWeek -1 must be > -1"},
		{name: "negative noise", change: func(g *Synthetic) { g.Noise = -0.1 }, err: "Noise -0.1 must be in [0, 2]"},
		{name: "factor below 1", change: func(g *Synthetic) { g.FlashCrowdFactor = 0.5 }, err: "FlashCrowdFactor 0.5 must be ≥ 1"},
		{name: "bursty", change: func(g *Synthetic) { *g = BurstySynthetic() }},
		{name: "burst jitter of half the spacing", change: func(g *Synthetic) { *g = BurstySynthetic(); g.BurstJitter = time.Hour },
			err: "BurstJitter 1h0m0s must be in [0, BurstEvery/2)"},
		{name: "burst longer than its room", change: func(g *Synthetic) { *g = BurstySynthetic(); g.BurstMax = 2 * time.Hour },
			err: "burst length 5m0s-2h0m0s"},
		{name: "burst factor below 1", change: func(g *Synthetic) { *g = BurstySynthetic(); g.BurstFactorMin = 0.5 },
			err: "burst factors 0.5-5"},
		{name: "spiky", change: func(g *Synthetic) { *g = SpikySynthetic() }},
		{name: "negative spike rate", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikesPerDay = -1 },
			err: "SpikesPerDay -1 must be in [0, 10000]"},
		{name: "NaN spike rate", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikesPerDay = math.NaN() },
			err: "SpikesPerDay NaN must be in [0, 10000]"},
		{name: "spike lengths reversed", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikeMin = time.Hour },
			err: "spike length 1h0m0s-10m0s"},
		{name: "spike of no length", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikeMin, g.SpikeMax = 0, 0 },
			err: "spike length 0s-0s"},
		{name: "negative spike height", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikeHeightMin = -0.5 },
			err: "spike heights -0.5-2.4"},
		{name: "infinite spike height", change: func(g *Synthetic) { *g = SpikySynthetic(); g.SpikeHeightMax = math.Inf(1) },
			err: "spike heights 2-+Inf"},
		{name: "outage period not a multiple", change: func(g *Synthetic) { *g = SpikySynthetic(); g.OutageWindow = 7 * time.Minute },
			err: "OutageEvery 24h0m0s must be a positive multiple of OutageWindow 7m0s"},
		{name: "outage without a window", change: func(g *Synthetic) { *g = SpikySynthetic(); g.OutageWindow = 0 },
			err: "multiple of OutageWindow 0s"},
		{name: "negative outage period", change: func(g *Synthetic) { *g = SpikySynthetic(); g.OutageEvery = -time.Hour },
			err: "OutageEvery -1h0m0s must be a positive multiple"},
		{name: "outage keeps its whole window", change: func(g *Synthetic) { *g = SpikySynthetic(); g.OutageKept = 30 * time.Minute },
			err: "OutageKept 30m0s must be in [0, OutageWindow 30m0s)"},
	}
	start := mustTime(t, "2024-01-01T00:00:00Z")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := DefaultSynthetic()
			tt.change(&g)
			err := g.validate()
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("validate() = %v, want %q", err, tt.err)
			}
			// Generate clamps instead of failing: values stay finite and ≥ 0.
			for i, v := range g.Generate(start, 10*time.Minute, 2000).Values {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("value %d is %v", i, v)
				}
			}
		})
	}
}

func TestSyntheticEmpty(t *testing.T) {
	g := DefaultSynthetic()
	start := mustTime(t, "2024-01-01T00:00:00Z")
	for _, tt := range []struct {
		step time.Duration
		n    int
	}{{0, 10}, {-time.Minute, 10}, {time.Minute, 0}, {time.Minute, -1}} {
		if s := g.Generate(start, tt.step, tt.n); s.Len() != 0 {
			t.Errorf("Generate(step %v, n %d) has %d values, want none", tt.step, tt.n, s.Len())
		}
	}
}

// TestSyntheticShapeVsAlibaba compares the default generator's hourly shape
// with the recorded Stable Diffusion service over the same dates. The
// recorded service is small and bursty (idle nights, peak 9× its mean); the
// default is a busier service (15% night floor, by design), so the test
// asserts the shared rhythm: a strong daily and weekly cycle and weekends
// well below weekdays.
//
// Measured (seed 1): alibaba acf(24h) 0.69, acf(168h) 0.46, weekend/weekday
// 0.35, trough/peak 0; synthetic 0.73, 0.66, 0.43, 0.18.
func TestSyntheticShapeVsAlibaba(t *testing.T) {
	dir := tracesDir(t)
	rec, err := LoadCSV(filepath.Join(dir, "alibaba_sd_requests_hourly.csv"), CSVOptions{Counts: true})
	if err != nil {
		t.Fatal(err)
	}
	syn := DefaultSynthetic().Generate(rec.Start, time.Hour, rec.Len())
	r, s := hourlyShape(rec), hourlyShape(syn)
	t.Logf("alibaba   %+v", r)
	t.Logf("synthetic %+v", s)
	checks := []struct {
		name             string
		recorded, synthd float64
		lo, hi           float64 // bounds for both
	}{
		{"daily autocorrelation", r.acfDay, s.acfDay, 0.5, 0.9},
		{"weekly autocorrelation", r.acfWeek, s.acfWeek, 0.3, 0.9},
		{"weekend/weekday", r.weekendToWeekday, s.weekendToWeekday, 0.25, 0.6},
	}
	for _, c := range checks {
		for _, v := range []struct {
			who string
			x   float64
		}{{"recorded", c.recorded}, {"synthetic", c.synthd}} {
			if v.x < c.lo || v.x > c.hi {
				t.Errorf("%s %s %.3f outside [%.2f, %.2f]", v.who, c.name, v.x, c.lo, c.hi)
			}
		}
	}
	if !within(s.troughToPeak, 0.15, 0.3) {
		t.Errorf("synthetic trough/peak %.3f, want about 0.15", s.troughToPeak)
	}
}

// spikyTargets is the signature SpikySynthetic is tuned to, measured at 30
// minutes over 28 days per minute: each figure with its relative
// tolerance, wider for the two small ones (lag-1 and the share above p99).
var spikyTargets = []struct {
	name   string
	figure func(Signature) float64
	want   float64
	relTol float64
}{
	{"busiest/step mean, mean", func(s Signature) float64 { return s.PeakRatioMean }, 2.0, 0.15},
	{"busiest/step mean, median", func(s Signature) float64 { return s.PeakRatioMedian }, 1.13, 0.15},
	{"busiest/step mean, p90", func(s Signature) float64 { return s.PeakRatioP90 }, 2.7, 0.15},
	{"within-step CV", func(s Signature) float64 { return s.CV }, 0.82, 0.15},
	{"within-step lag-1", func(s Signature) float64 { return s.Lag1 }, 0.12, 0.25},
	{"day/night", func(s Signature) float64 { return s.DayNight }, 3.9, 0.15},
	{"peak/mean", func(s Signature) float64 { return s.PeakToMean }, 4.7, 0.15},
	{"share above p99", func(s Signature) float64 { return s.ShareAboveP99 }, 0.0016, 0.25},
}

// spikySignature measures 28 days of g per minute at 30 minutes.
func spikySignature(t *testing.T, g Synthetic) Signature {
	t.Helper()
	s := g.Generate(mustTime(t, "2024-01-01T00:00:00Z"), time.Minute, 28*24*60)
	sig, err := MeasureSignature(s, 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestSpikySyntheticSignature checks every figure of SpikySynthetic's
// signature against its target for seeds 1, 2 and 3.
//
// Measured: seed 1 2.02, 1.12, 2.54, 0.847, 0.122, 3.63, 4.51, 0.180%;
// seed 2 2.06, 1.13, 2.67, 0.851, 0.127, 3.98, 4.57, 0.176%; seed 3 2.06,
// 1.12, 2.66, 0.848, 0.121, 3.72, 4.39, 0.169%.
func TestSpikySyntheticSignature(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		g := SpikySynthetic()
		g.Seed = seed
		if err := g.validate(); err != nil {
			t.Fatal(err)
		}
		sig := spikySignature(t, g)
		t.Logf("seed %d: %v", seed, sig)
		for _, c := range spikyTargets {
			if got := c.figure(sig); !within(got, c.want, c.relTol) {
				t.Errorf("seed %d: %s %.4g, want %.4g ±%.0f%%", seed, c.name, got, c.want, 100*c.relTol)
			}
		}
	}
}

// TestBurstySignatureDiffers checks that the signature tells the two
// modes apart: BurstySynthetic's bursts persist from minute to minute
// within a half hour (lag-1 0.82) and spread less (CV 0.42), so both miss
// SpikySynthetic's targets, whose lag-1 is 0.12.
func TestBurstySignatureDiffers(t *testing.T) {
	bursty, spiky := spikySignature(t, BurstySynthetic()), spikySignature(t, SpikySynthetic())
	if bursty.Lag1 < 0.6 || spiky.Lag1 > 0.2 {
		t.Errorf("lag-1 bursty %.3f, spiky %.3f; want above 0.6 and below 0.2", bursty.Lag1, spiky.Lag1)
	}
	missed := map[string]bool{}
	for _, c := range spikyTargets {
		missed[c.name] = !within(c.figure(bursty), c.want, c.relTol)
	}
	if !missed["within-step lag-1"] || !missed["within-step CV"] {
		t.Errorf("bursty signature %v meets the spiky targets of lag-1 or CV", bursty)
	}
}

// spikesAndOutages returns the quiet generator with SpikySynthetic's
// spikes and outages, and the flat day of the same peak, for tests that
// isolate one or the other.
func spikesAndOutages() Synthetic {
	g, s := quiet(), SpikySynthetic()
	g.SpikesPerDay, g.SpikeMin, g.SpikeMax = s.SpikesPerDay, s.SpikeMin, s.SpikeMax
	g.SpikeHeightMin, g.SpikeHeightMax = s.SpikeHeightMin, s.SpikeHeightMax
	g.OutageEvery, g.OutageWindow, g.OutageKept = s.OutageEvery, s.OutageWindow, s.OutageKept
	return g
}

// TestSyntheticSpikes finds every spike of SpikySynthetic over 14 days at
// a 10-second step, noise and outages off: about one per 1/9 day plus a
// spike's mean length (121 expected), each raising 24 to 61 steps (4 to 10
// minutes, plus a partial step at each edge), adding 2 to 2.4 times
// PeakRPS (judged inside a spike, not on its partial edges).
func TestSyntheticSpikes(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := spikesAndOutages()
	g.OutageEvery = 0
	const step, n = 10 * time.Second, 14 * 24 * 360
	spiky := g.Generate(start, step, n)
	clean := quiet().Generate(start, step, n)
	raised := func(i int) bool { return spiky.Values[i] > clean.Values[i]*(1+1e-9) }
	spikes := 0
	for i := 0; i < n; i++ {
		if !raised(i) {
			continue
		}
		from := i
		for i < n && raised(i) {
			i++
		}
		spikes++
		if from == 0 || i == n {
			continue // cut by the series' ends
		}
		if d := i - from; d < 24 || d > 61 {
			t.Errorf("spike at step %d raises %d steps, want 24 to 61", from, d)
		}
		for k := from + 1; k < i-1; k++ {
			if h := (spiky.Values[k] - clean.Values[k]) / g.PeakRPS; h < 2-1e-9 || h > 2.4+1e-9 {
				t.Errorf("spike at step %d adds %.3f·PeakRPS at step %d, want 2 to 2.4", from, h, k)
				break
			}
		}
	}
	if spikes < 85 || spikes > 160 {
		t.Errorf("%d spikes in 14 days, want about 121", spikes)
	}
	g.SpikesPerDay = 0
	if none := g.Generate(start, step, n); !slices.Equal(none.Values, clean.Values) {
		t.Error("SpikesPerDay 0 still changes demand")
	}
}

// TestSyntheticOutages checks SpikySynthetic's outages over 28 days per
// minute, noise and spikes off: in each UTC day one half hour on the
// half-hour grid keeps its first minute and reads 0 for the other 29;
// every other minute is untouched, and the half hours differ from day to
// day.
func TestSyntheticOutages(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := spikesAndOutages()
	g.SpikesPerDay = 0
	const n = 28 * 24 * 60
	out := g.Generate(start, time.Minute, n)
	clean := quiet().Generate(start, time.Minute, n)
	windows := map[int]bool{}
	for day := range 28 {
		var zero []int
		for m := day * 1440; m < (day+1)*1440; m++ {
			switch out.Values[m] {
			case 0:
				zero = append(zero, m)
			case clean.Values[m]:
			default:
				t.Fatalf("minute %d is %v, want %v or 0", m, out.Values[m], clean.Values[m])
			}
		}
		first := zero[0] - 1
		if len(zero) != 29 || first%30 != 0 || zero[28] != first+29 {
			t.Fatalf("day %d: %d minutes at 0 from minute %d, want 29 from a half hour's second minute", day, len(zero), zero[0])
		}
		windows[first%1440] = true
	}
	if len(windows) < 15 {
		t.Errorf("outages in only %d distinct half hours of the day over 28 days", len(windows))
	}
}

// TestSyntheticSpikesCoarse checks that at a step coarser than a minute a
// spike or an outage counts by the share of the step it covers: on a flat
// day without noise, each value at 7, 10 or 30 minutes is the mean of the
// 1-minute values it spans, and an outage half hour reads 1/30 of the
// level at 30 minutes. Spikes and outages are checked apart: each factor
// is averaged over the step on its own.
func TestSyntheticSpikesCoarse(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	flat := spikesAndOutages()
	flat.TroughRatio, flat.WeekendRatio, flat.LunchDip = 1, 1, 0
	spikesOnly, outagesOnly := flat, flat
	spikesOnly.OutageEvery, outagesOnly.SpikesPerDay = 0, 0
	const minutes = 7 * 24 * 60
	for name, g := range map[string]Synthetic{"spikes": spikesOnly, "outages": outagesOnly} {
		fine := g.Generate(start, time.Minute, minutes)
		for _, k := range []int{7, 10, 30} {
			coarse := g.Generate(start, time.Duration(k)*time.Minute, minutes/k)
			for i, v := range coarse.Values {
				mean := 0.0
				for _, f := range fine.Values[i*k : (i+1)*k] {
					mean += f / float64(k)
				}
				if math.Abs(v-mean) > 1e-9*g.PeakRPS {
					t.Fatalf("%s, step %d min, value %d: %.6f, want the mean of its minutes %.6f", name, k, i, v, mean)
				}
			}
		}
	}
	halfHours := outagesOnly.Generate(start, 30*time.Minute, minutes/30).Values
	if low := slices.Min(halfHours); math.Abs(low-flat.PeakRPS/30) > 1e-9 {
		t.Errorf("quietest half hour %.4f, want 1/30 of %.0f", low, flat.PeakRPS)
	}
}

// TestSpikySyntheticReproducible checks that a seed fixes the spiky series,
// that a longer one begins with the shorter one at a 1- and a 7-minute
// step, and that seeds differ.
func TestSpikySyntheticReproducible(t *testing.T) {
	start := mustTime(t, "2024-01-01T00:00:00Z")
	g := SpikySynthetic()
	for _, step := range []time.Duration{time.Minute, 7 * time.Minute} {
		n := int(3 * 24 * time.Hour / step)
		short, again, long := g.Generate(start, step, n), g.Generate(start, step, n), g.Generate(start, step, 4*n)
		if !slices.Equal(short.Values, again.Values) {
			t.Errorf("step %v: same seed, different series", step)
		}
		if !slices.Equal(short.Values, long.Values[:n]) {
			t.Errorf("step %v: a longer series does not begin with the shorter one", step)
		}
		other := g
		other.Seed++
		if slices.Equal(short.Values, other.Generate(start, step, n).Values) {
			t.Errorf("step %v: different seeds, same series", step)
		}
	}
}
