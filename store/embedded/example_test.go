package embedded_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// Write a few GPU utilisation samples and read them back as 1-minute means.
func Example() {
	dir, _ := os.MkdirTemp("", "prewarm-example")
	defer os.RemoveAll(dir)
	s, err := embedded.Open(filepath.Join(dir, "prewarm.db"), embedded.Options{Retention: 90 * 24 * time.Hour,
		Now: func() time.Time { return time.Date(2026, 1, 5, 1, 0, 0, 0, time.UTC) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	ctx := context.Background()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	tags := map[string]string{"pool": "inference", "gpu": "0"}
	var points []store.Point
	for i, util := range []float64{20, 40, 90, 70} {
		points = append(points, store.Point{Measurement: "gpu_util", Tags: tags, Value: util, Time: at.Add(time.Duration(i) * 30 * time.Second)})
	}
	if err := s.Write(ctx, points); err != nil {
		fmt.Println(err)
		return
	}
	series, err := s.Query(ctx, store.Query{Measurement: "gpu_util", Match: map[string]string{"pool": "inference"},
		Start: at, End: at.Add(time.Hour), Step: time.Minute, Aggregate: store.Mean})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ser := range series {
		for _, smp := range ser.Samples {
			fmt.Println(store.CanonicalTags(ser.Tags), smp.Time.Format(time.TimeOnly), smp.Value)
		}
	}
	// Output:
	// {"gpu":"0","pool":"inference"} 00:00:00 30
	// {"gpu":"0","pool":"inference"} 00:01:00 80
}
