package actuator_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
)

// BenchmarkSafeSetDesired measures the safety layer's own cost per call
// (capacity read, limits, audit line, metrics) around an in-memory back-end.
func BenchmarkSafeSetDesired(b *testing.B) {
	for _, bc := range []struct {
		name   string
		change bool
	}{{"noop", false}, {"change", true}} {
		b.Run(bc.name, func(b *testing.B) {
			fake := actuatortest.New("fake").AddPool("p", 5, 0, 0)
			m, err := actuator.NewMetrics(prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			s := actuator.NewSafe(fake, actuator.SafetyOptions{
				Pools: []actuator.PoolConfig{{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 10}}},
				Audit: io.Discard, Metrics: m, Logger: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				desired := 5
				if bc.change {
					desired = 4 + i%2
				}
				if err := s.SetDesired(ctx, "p", desired, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
