package alert

import (
	"fmt"
	"testing"
	"time"

	"github.com/prewarm/prewarm/store"
)

// BenchmarkEvaluate: one cycle of a 64-GPU fleet (8 readings per GPU) and
// 20 services (queue and P99 each).
// Run: go test ./collector/alert -run=^$ -bench=Evaluate -benchtime=200x
func BenchmarkEvaluate(b *testing.B) {
	var points []store.Point
	for g := range 64 {
		tags := map[string]string{store.TagHost: fmt.Sprintf("h%d", g/8), store.TagGPU: fmt.Sprint(g % 8),
			store.TagUUID: fmt.Sprintf("GPU-%d", g), store.TagPool: "train"}
		for _, m := range []string{store.GPUUtil, store.GPUSMActive, store.GPUEngineActive, store.GPUMemUsedBytes,
			store.GPUMemTotalBytes, store.GPUPowerWatts, store.GPUPowerLimitWatts, store.GPUTempCelsius} {
			points = append(points, store.Point{Measurement: m, Tags: tags, Value: 50})
		}
	}
	for s := range 20 {
		points = append(points, svc(fmt.Sprintf("svc%d", s), "llm", "queue", 60, "p99", 3)...)
	}
	e, err := NewEngine(DefaultRules(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	at := t0
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(10 * time.Second)
		e.Evaluate(at, points)
	}
}
