package service

import (
	"math"
	"testing"
	"time"
)

// dayMASE against figures worked by hand: a day of 48 half-hour steps,
// demand y, the model off by a constant, the demand a week (or a day)
// before off by another.
func TestDayMASE(t *testing.T) {
	at := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	step := 30 * time.Minute
	week, day := 7*24*time.Hour, 24*time.Hour
	// build: weekErr or dayErr < 0 leaves that earlier demand out.
	build := func(modelErr, weekErr, dayErr float64, scored int) (actual, model map[int64]float64) {
		actual, model = map[int64]float64{}, map[int64]float64{}
		for i := range 48 {
			ts := at.Add(-day + time.Duration(i)*step)
			y := 100 + float64(i)
			actual[ts.UnixNano()] = y
			if weekErr >= 0 {
				actual[ts.Add(-week).UnixNano()] = y + weekErr
			}
			if i < scored {
				model[ts.UnixNano()] = y - modelErr
			}
		}
		if dayErr >= 0 { // the day before the last
			for i := range 48 {
				ts := at.Add(-2*day + time.Duration(i)*step)
				actual[ts.UnixNano()] = 100 + float64(i) + dayErr
			}
		}
		return actual, model
	}
	tests := []struct {
		name                      string
		modelErr, weekErr, dayErr float64
		scored                    int
		periods                   []time.Duration
		want                      float64
	}{
		{"model twice as good as last week", 5, 10, -1, 48, []time.Duration{day, week}, 0.5},
		{"model worse than last week", 20, 10, -1, 48, []time.Duration{day, week}, 2},
		{"half the day scored is enough", 5, 10, -1, 24, []time.Duration{day, week}, 0.5},
		{"less than half is not", 5, 10, -1, 23, []time.Duration{day, week}, math.NaN()},
		{"no week of history: the daily period", 6, -1, 3, 48, []time.Duration{day, week}, 2},
		{"seasonal naive exact: no ratio", 5, 0, -1, 48, []time.Duration{week}, math.NaN()},
		{"no forecasts", 5, 10, -1, 0, []time.Duration{day, week}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			actual, model := build(tt.modelErr, tt.weekErr, tt.dayErr, tt.scored)
			got := dayMASE(actual, model, at, step, tt.periods)
			if math.IsNaN(tt.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tt.want) > 1e-12) {
				t.Errorf("MASE %v, want %v", got, tt.want)
			}
		})
	}
}

// The sample ring keeps one sample per bucket (the last decision, the
// highest demand) and the last historySamples buckets.
func TestSampleRing(t *testing.T) {
	var r sampleRing
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	add := func(at time.Time, demand float32, desired int32) {
		r.add(sample{at: at.UnixNano(), demand: demand, desired: desired}, time.Minute)
	}
	add(t0, 10, 1)
	add(t0.Add(time.Minute), 30, 2)
	add(t0.Add(2*time.Minute), float32(math.NaN()), 3)
	add(t0.Add(5*time.Minute), 5, 4)
	got := r.since(time.Time{}, time.UTC)
	if len(got) != 2 || got[0].DemandRPS != 30 || got[0].Desired != 3 || !got[0].At.Equal(t0.Add(2*time.Minute)) || got[1].Desired != 4 {
		t.Fatalf("two buckets: %+v", got)
	}
	for i := range 2 * historySamples {
		add(t0.Add(time.Duration(10+5*i)*time.Minute), 1, int32(i))
	}
	got = r.since(time.Time{}, time.UTC)
	if len(got) != historySamples || got[len(got)-1].Desired != 2*historySamples-1 || got[0].Desired != historySamples {
		t.Errorf("after wrapping: %d samples, first %d, last %d", len(got), got[0].Desired, got[len(got)-1].Desired)
	}
	for i := 1; i < len(got); i++ {
		if !got[i].At.After(got[i-1].At) {
			t.Fatalf("sample %d at %s not after %s", i, got[i].At, got[i-1].At)
		}
	}
	if n := len(r.since(got[len(got)-10].At, time.UTC)); n != 10 {
		t.Errorf("since the tenth last: %d samples", n)
	}
}
