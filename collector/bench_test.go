package collector_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/collector/alert"
	"github.com/prewarm/prewarm/collector/buffer"
	"github.com/prewarm/prewarm/collector/dcgm"
	"github.com/prewarm/prewarm/collector/memstore"
	"github.com/prewarm/prewarm/collector/nvml"
	"github.com/prewarm/prewarm/collector/service"
)

// fakeNVML is go-nvml's mock with n busy GPUs.
func fakeNVML(n int) *mock.Interface {
	devices := make([]gonvml.Device, n)
	for i := range devices {
		devices[i] = &mock.Device{
			GetUUIDFunc:             func() (string, gonvml.Return) { return "GPU-bench-" + string(rune('a'+i)), gonvml.SUCCESS },
			GetNameFunc:             func() (string, gonvml.Return) { return "NVIDIA H100 80GB HBM3", gonvml.SUCCESS },
			GetUtilizationRatesFunc: func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{Gpu: 87}, gonvml.SUCCESS },
			GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) {
				return gonvml.Memory{Total: 85520809984, Used: 60e9, Free: 25520809984}, gonvml.SUCCESS
			},
			GetPowerUsageFunc:         func() (uint32, gonvml.Return) { return 612000, gonvml.SUCCESS },
			GetEnforcedPowerLimitFunc: func() (uint32, gonvml.Return) { return 700000, gonvml.SUCCESS },
			GetTemperatureFunc:        func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 61, gonvml.SUCCESS },
			GetComputeRunningProcessesFunc: func() ([]gonvml.ProcessInfo, gonvml.Return) {
				return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 59e9}}, gonvml.SUCCESS
			},
			GpmQueryDeviceSupportFunc: func() (gonvml.GpmSupport, gonvml.Return) { return gonvml.GpmSupport{}, gonvml.SUCCESS },
		}
	}
	return &mock.Interface{
		InitFunc:           func() gonvml.Return { return gonvml.SUCCESS },
		ShutdownFunc:       func() gonvml.Return { return gonvml.SUCCESS },
		DeviceGetCountFunc: func() (int, gonvml.Return) { return n, gonvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (gonvml.Device, gonvml.Return) {
			return devices[i], gonvml.SUCCESS
		},
	}
}

func servePage(b *testing.B, file string) *httptest.Server {
	page, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(page) }))
	b.Cleanup(srv.Close)
	return srv
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCycle is one collection cycle of a busy node: 8 GPUs through
// (fake) NVML plus 10 scrape targets over loopback HTTP (5 dcgm-exporter
// pages of 8 H100s, 5 service endpoints), validation, alert rules, the
// buffer and a write to an in-memory store. cpu-ms/cycle is process CPU
// time (user+sys, from getrusage) per cycle, the httptest servers' share
// included, so it is an upper bound; at a 10 s interval 1% of a core is
// 100 ms per cycle.
//
//	go test ./collector -run '^$' -bench BenchmarkCycle -benchtime 200x
func BenchmarkCycle(b *testing.B) {
	inputs := []collector.Input{{Source: nvml.New(fakeNVML(8))}}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for i := range 5 {
		srv := servePage(b, filepath.Join("dcgm", "testdata", "h100-8gpu-v3.3.5.prom"))
		src, err := dcgm.New(srv.URL+"/metrics", client, 0)
		if err != nil {
			b.Fatal(err)
		}
		// The five pages are copies of one node: a tag keeps their series apart.
		inputs = append(inputs, collector.Input{Source: src, Tags: map[string]string{"exporter": string(rune('0' + i))}})
	}
	for i := range 5 {
		srv := servePage(b, filepath.Join("service", "testdata", "api-t1.prom"))
		src, err := service.New(service.Config{Name: "svc" + string(rune('0'+i)), URL: srv.URL + "/metrics",
			RequestsCounter: "http_requests_total", QueueGauge: "queue_length", LatencyHistogram: "http_request_duration_seconds", Client: client})
		if err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, collector.Input{Source: src})
	}
	engine, err := alert.NewEngine(alert.DefaultRules(), alert.Options{})
	if err != nil {
		b.Fatal(err)
	}
	buf, err := buffer.New(buffer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st := &memstore.Store{}
	clock := &fakeClock{wall: time.Now()}
	c, err := collector.New(collector.Config{Inputs: inputs, Store: st, Buffer: buf, Clock: clock,
		Observers: []collector.Observer{engine}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c.Cycle(ctx) // warm up connections and NVML init
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	points := 0
	for b.Loop() {
		clock.step(10*time.Second, 10*time.Second)
		res := c.Cycle(ctx)
		points += res.Accepted
		if err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/cycle")
	b.ReportMetric(float64(points)/float64(b.N), "points/cycle")
}
