package datasets_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

func TestAlignWeeks(t *testing.T) {
	end := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) // a Tuesday
	tests := []struct {
		name  string
		start time.Time
		steps int
		want  time.Time
	}{
		{"two years back", time.Date(2024, 11, 15, 16, 0, 0, 0, time.UTC), 554, time.Date(2026, 11, 6, 16, 0, 0, 0, time.UTC)},
		{"already in the last week", end.Add(-48 * time.Hour), 24, end.Add(-48 * time.Hour)},
		{"in the future", end.Add(30 * 24 * time.Hour), 24, end.Add(30*24*time.Hour - 5*datasets.Week)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := datasets.Series{Start: tc.start, Step: time.Hour, Values: make([]float64, tc.steps)}
			got := s.AlignWeeks(end)
			if !got.Start.Equal(tc.want) {
				t.Errorf("start %s, want %s", got.Start, tc.want)
			}
			if got.Start.Weekday() != tc.start.Weekday() || got.Start.Hour() != tc.start.Hour() {
				t.Errorf("weekday or hour changed: %s -> %s", tc.start, got.Start)
			}
			if e := got.End(); e.After(end) || !e.After(end.Add(-datasets.Week)) {
				t.Errorf("end %s not in the week before %s", e, end)
			}
		})
	}
}

func TestImport(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "p.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := datasets.Series{Name: "test", Start: start, Step: time.Hour, Values: []float64{1, math.NaN(), 3, 4}}
	tags := map[string]string{"pool": "sd"}
	// Another series matching pool=sd covers the last hour.
	if err := st.Write(context.Background(), []store.Point{{Measurement: "rps", Tags: map[string]string{"pool": "sd", "service": "gw"},
		Value: 9, Time: start.Add(3*time.Hour + 10*time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	res, err := datasets.Import(context.Background(), st, s, datasets.ImportOptions{Measurement: "rps", Tags: tags,
		PointEvery: 30 * time.Minute, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Points != 4 || res.Steps != 2 || res.Missing != 1 || res.Overlapping != 1 || !res.First.Equal(start) || !res.Last.Equal(start.Add(2*time.Hour)) {
		t.Errorf("Imported = %+v", res)
	}
	got, err := st.Query(context.Background(), store.Query{Measurement: "rps", Match: tags, Start: start, End: start.Add(4 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var own []store.Sample
	for _, ser := range got {
		if store.CanonicalTags(ser.Tags) == store.CanonicalTags(tags) {
			own = ser.Samples
		}
	}
	want := []float64{1, 1, 3, 3} // at 0:00, 0:30, 2:00, 2:30
	if len(own) != len(want) {
		t.Fatalf("imported series %v, want values %v", own, want)
	}
	for i, smp := range own {
		if smp.Value != want[i] {
			t.Errorf("point %d = %v, want %v", i, smp, want[i])
		}
	}

	for _, tc := range []struct {
		name string
		opts datasets.ImportOptions
	}{
		{"point-every not dividing", datasets.ImportOptions{Measurement: "rps", Tags: tags, PointEvery: 7 * time.Minute}},
		{"in the future", datasets.ImportOptions{Measurement: "rps", Tags: tags, Until: start.Add(time.Hour)}},
		{"invalid measurement", datasets.ImportOptions{Tags: tags}},
	} {
		if _, err := datasets.Import(context.Background(), st, s, tc.opts); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
