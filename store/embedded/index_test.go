package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// The series index answers matchers exactly as a scan of every series
// would, also after a reopen (built from the file) and after retention
// drops series.
func TestIndexMatches(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t, embedded.Options{})
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var pts []store.Point
	for _, pool := range []string{"a", "b"} {
		for gpu := range 3 {
			pts = append(pts, store.Point{Measurement: "gpu_util", Tags: map[string]string{"pool": pool, "gpu": fmt.Sprint(gpu)}, Value: 1, Time: at})
		}
	}
	pts = append(pts, store.Point{Measurement: "gpu_util", Tags: nil, Value: 1, Time: at}, // no tags at all
		store.Point{Measurement: "rps", Tags: map[string]string{"pool": "a"}, Value: 1, Time: at.Add(-time.Hour)})
	if err := s.Write(ctx, pts); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		measurement string
		match       map[string]string
		want        []string // canonical tags, in order
	}{
		{"every series", "gpu_util", nil, []string{`{"gpu":"0","pool":"a"}`, `{"gpu":"0","pool":"b"}`, `{"gpu":"1","pool":"a"}`,
			`{"gpu":"1","pool":"b"}`, `{"gpu":"2","pool":"a"}`, `{"gpu":"2","pool":"b"}`, `{}`}},
		{"one tag", "gpu_util", map[string]string{"pool": "b"}, []string{`{"gpu":"0","pool":"b"}`, `{"gpu":"1","pool":"b"}`, `{"gpu":"2","pool":"b"}`}},
		{"two tags", "gpu_util", map[string]string{"pool": "a", "gpu": "2"}, []string{`{"gpu":"2","pool":"a"}`}},
		{"no such value", "gpu_util", map[string]string{"pool": "c"}, nil},
		{"no such key", "gpu_util", map[string]string{"dc": "x"}, nil},
		{"no such measurement", "queue", nil, nil},
		{"other measurement", "rps", map[string]string{"pool": "a"}, []string{`{"pool":"a"}`}},
	}
	check := func(t *testing.T, s *embedded.Store, name string) {
		for _, tt := range tests {
			if name == "after retention" && tt.measurement == "rps" {
				tt.want = nil // its only point expired
			}
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				got, err := s.Query(ctx, store.Query{Measurement: tt.measurement, Match: tt.match, Start: at.Add(-2 * time.Hour), End: at.Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				var canon []string
				for _, ser := range got {
					canon = append(canon, store.CanonicalTags(ser.Tags))
				}
				if fmt.Sprint(canon) != fmt.Sprint(tt.want) {
					t.Errorf("series %v, want %v", canon, tt.want)
				}
			})
		}
	}
	check(t, s, "written")
	// A caller changing the tags it got must not change the index.
	got, _ := s.Query(ctx, store.Query{Measurement: "rps", Start: at.Add(-2 * time.Hour), End: at})
	got[0].Tags["pool"] = "mutated"
	check(t, s, "after a caller mutated a result")
	s.Close()
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(t, s, "reopened")
	if _, err := s.DeleteBefore(ctx, at.Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	check(t, s, "after retention")
}

// PromQL is for a Prometheus store; the embedded store says so instead of
// answering something else.
func TestExprIsRefused(t *testing.T) {
	s, _ := openTemp(t, embedded.Options{NoSync: true})
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	_, err := s.Query(context.Background(), store.Query{Expr: `sum(rate(http_requests_total[1m]))`, Start: at, End: at.Add(time.Hour)})
	if !errors.Is(err, store.ErrInvalidQuery) {
		t.Errorf("err = %v, want ErrInvalidQuery", err)
	}
}

// BenchmarkQueryOnePoolOf1000 reads one pool's last minute among 1,000
// pools of 3 series each, the service's live read per pool and tick:
// go test ./store/embedded -run '^$' -bench OnePoolOf1000
func BenchmarkQueryOnePoolOf1000(b *testing.B) {
	ctx := context.Background()
	s, _ := openTemp(b, embedded.Options{NoSync: true})
	defer s.Close()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var pts []store.Point
	for pool := range 1000 {
		for gpu := range 3 {
			for i := range 6 {
				pts = append(pts, store.Point{Measurement: "gpu_util", Tags: map[string]string{"pool": fmt.Sprintf("pool-%04d", pool), "gpu": fmt.Sprint(gpu)},
					Value: 50, Time: at.Add(time.Duration(i) * 10 * time.Second)})
			}
		}
	}
	if err := s.Write(ctx, pts); err != nil {
		b.Fatal(err)
	}
	q := store.Query{Measurement: "gpu_util", Match: map[string]string{"pool": "pool-0500"}, Start: at, End: at.Add(time.Minute)}
	for b.Loop() {
		got, err := s.Query(ctx, q)
		if err != nil || len(got) != 3 {
			b.Fatalf("Query = %d series, %v", len(got), err)
		}
	}
}
