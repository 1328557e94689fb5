package nvml

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/prewarm/prewarm/store"
)

// reading is one GPU in testdata/*.json, in NVML's own units. A negative
// power limit stands for ERROR_NOT_SUPPORTED.
type reading struct {
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	UtilGPU uint32 `json:"util_gpu"`
	Memory  struct {
		Total, Used, Free uint64
	} `json:"memory"`
	PowerMW      uint32 `json:"power_mw"`
	PowerLimitMW int64  `json:"power_limit_mw"`
	TempC        uint32 `json:"temp_c"`
	Processes    []struct {
		Pid  uint32 `json:"pid"`
		Used uint64 `json:"used"`
	} `json:"processes"`
	GPMSMUtil []float64 `json:"gpm_sm_util"` // value returned by each GpmMetricsGet call
}

func loadReadings(t *testing.T, file string) []reading {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ GPUs []reading }
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.GPUs
}

// fakeSample is a GPM sample that knows its device and sequence number.
type fakeSample struct {
	mock.GpmSample
	dev   int
	seq   int
	freed *int
}

// fakeLibrary replays readings through go-nvml's mocks.
func fakeLibrary(gpus []reading) (*mock.Interface, *int) {
	freed := new(int)
	devices := make([]nvml.Device, len(gpus))
	for i, g := range gpus {
		seq := 0
		d := &mock.Device{
			GetUUIDFunc:             func() (string, nvml.Return) { return g.UUID, nvml.SUCCESS },
			GetNameFunc:             func() (string, nvml.Return) { return g.Name, nvml.SUCCESS },
			GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: g.UtilGPU}, nvml.SUCCESS },
			GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
				return nvml.Memory{Total: g.Memory.Total, Used: g.Memory.Used, Free: g.Memory.Free}, nvml.SUCCESS
			},
			GetPowerUsageFunc: func() (uint32, nvml.Return) { return g.PowerMW, nvml.SUCCESS },
			GetEnforcedPowerLimitFunc: func() (uint32, nvml.Return) {
				if g.PowerLimitMW < 0 {
					return 0, nvml.ERROR_NOT_SUPPORTED
				}
				return uint32(g.PowerLimitMW), nvml.SUCCESS
			},
			GetTemperatureFunc: func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
				if s != nvml.TEMPERATURE_GPU {
					return 0, nvml.ERROR_INVALID_ARGUMENT
				}
				return g.TempC, nvml.SUCCESS
			},
			GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
				var out []nvml.ProcessInfo
				for _, p := range g.Processes {
					out = append(out, nvml.ProcessInfo{Pid: p.Pid, UsedGpuMemory: p.Used})
				}
				return out, nvml.SUCCESS
			},
			GpmQueryDeviceSupportFunc: func() (nvml.GpmSupport, nvml.Return) {
				return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
			},
		}
		d.GpmSampleGetFunc = func(s nvml.GpmSample) nvml.Return {
			fs := s.(*fakeSample)
			fs.dev, fs.seq = i, seq
			seq++
			return nvml.SUCCESS
		}
		devices[i] = d
	}
	lib := &mock.Interface{
		InitFunc:           func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:       func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devices), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devices) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devices[i], nvml.SUCCESS
		},
		GpmSampleAllocFunc: func() (nvml.GpmSample, nvml.Return) {
			s := &fakeSample{freed: freed}
			s.FreeFunc = func() nvml.Return { *s.freed++; return nvml.SUCCESS }
			return s, nvml.SUCCESS
		},
		GpmMetricsGetFunc: func(m *nvml.GpmMetricsGetType) nvml.Return {
			s1, s2 := m.Sample1.(*fakeSample), m.Sample2.(*fakeSample)
			if s1.dev != s2.dev || s2.seq != s1.seq+1 || m.Metrics[0].MetricId != uint32(nvml.GPM_METRIC_SM_UTIL) {
				return nvml.ERROR_INVALID_ARGUMENT
			}
			m.Metrics[0].Value = gpus[s1.dev].GPMSMUtil[s1.seq]
			return nvml.SUCCESS
		},
	}
	return lib, freed
}

func pointValue(points []store.Point, measurement, gpu string) (float64, bool) {
	for _, p := range points {
		if p.Measurement == measurement && p.Tags[store.TagGPU] == gpu && p.Tags[store.TagPID] == "" {
			return p.Value, true
		}
	}
	return math.NaN(), false
}

func TestGatherReplaysReadings(t *testing.T) {
	gpus := loadReadings(t, "h100-2gpu.json")
	lib, freed := fakeLibrary(gpus)
	src := New(lib)

	first, err := src.Gather(context.Background())
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	second, err := src.Gather(context.Background())
	if err != nil {
		t.Fatalf("second Gather: %v", err)
	}
	tests := []struct {
		points      []store.Point
		measurement string
		gpu         string
		want        float64 // NaN: absent
	}{
		{first, store.GPUUtil, "0", 93},
		{first, store.GPUMemUsedBytes, "0", 78931132416},
		{first, store.GPUMemTotalBytes, "0", 85520809984},
		{first, store.GPUMemFreeBytes, "1", 84967161856},
		{first, store.GPUPowerWatts, "0", 612.437},
		{first, store.GPUPowerLimitWatts, "0", 700},
		{first, store.GPUPowerLimitWatts, "1", math.NaN()}, // not supported: skipped
		{first, store.GPUTempCelsius, "1", 29},
		{first, store.GPUProcesses, "0", 1},
		{first, store.GPUProcesses, "1", 0},
		{first, store.GPUSMActive, "0", math.NaN()}, // GPM needs two samples
		{second, store.GPUSMActive, "0", 0.885},
		{second, store.GPUSMActive, "1", 0},
	}
	for _, tc := range tests {
		got, ok := pointValue(tc.points, tc.measurement, tc.gpu)
		switch {
		case math.IsNaN(tc.want) && ok:
			t.Errorf("%s gpu %s = %v, want absent", tc.measurement, tc.gpu, got)
		case !math.IsNaN(tc.want) && (!ok || math.Abs(got-tc.want) > 1e-9):
			t.Errorf("%s gpu %s = %v (present %v), want %v", tc.measurement, tc.gpu, got, ok, tc.want)
		}
	}
	var proc *store.Point
	for i, p := range first {
		if p.Measurement == store.GPUProcessMemUsedBytes {
			proc = &first[i]
		}
	}
	if proc == nil || proc.Tags[store.TagPID] != "41237" || proc.Value != 78823456768 || proc.Tags[store.TagUUID] != gpus[0].UUID {
		t.Errorf("process point = %+v, want pid 41237 holding 78823456768 bytes on GPU 0", proc)
	}
	for _, p := range first {
		if p.Tags[store.TagSource] != "nvml" || p.Tags[store.TagModel] != "NVIDIA H100 80GB HBM3" {
			t.Fatalf("point %s lacks source/model tags: %v", p.Measurement, p.Tags)
		}
	}
	if len(lib.InitCalls()) != 1 {
		t.Errorf("Init called %d times, want once", len(lib.InitCalls()))
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	// Two samples per GPU were taken; the first of each was freed after use,
	// the last on Close.
	if *freed != 4 || len(lib.ShutdownCalls()) != 1 {
		t.Errorf("freed %d GPM samples and shut down %d times; want 4 and 1", *freed, len(lib.ShutdownCalls()))
	}
}

// Without a driver Gather says so with ErrNoDriver and tries again next
// time; once the driver is there, it works.
func TestGatherNoDriverThenDriver(t *testing.T) {
	lib, _ := fakeLibrary(loadReadings(t, "h100-2gpu.json"))
	driver := false
	lib.InitFunc = func() nvml.Return {
		if !driver {
			return nvml.ERROR_LIBRARY_NOT_FOUND
		}
		return nvml.SUCCESS
	}
	src := New(lib)
	for range 2 {
		if _, err := src.Gather(context.Background()); !errors.Is(err, ErrNoDriver) {
			t.Fatalf("Gather err = %v, want ErrNoDriver", err)
		}
	}
	driver = true
	points, err := src.Gather(context.Background())
	if err != nil || len(points) == 0 {
		t.Fatalf("after the driver appeared: %d points, %v", len(points), err)
	}
}

// A failing read on one GPU is reported, and the other readings kept.
func TestGatherPartialFailure(t *testing.T) {
	lib, _ := fakeLibrary(loadReadings(t, "h100-2gpu.json"))
	src := New(lib)
	if _, err := src.Gather(context.Background()); err != nil {
		t.Fatal(err)
	}
	d1, _ := lib.DeviceGetHandleByIndex(1)
	d1.(*mock.Device).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
	}
	points, err := src.Gather(context.Background())
	if !errors.Is(err, nvml.ERROR_GPU_IS_LOST) {
		t.Fatalf("err = %v, want ERROR_GPU_IS_LOST", err)
	}
	if _, ok := pointValue(points, store.GPUUtil, "0"); !ok {
		t.Error("GPU 0 utilisation lost because GPU 1 failed")
	}
	if _, ok := pointValue(points, store.GPUMemUsedBytes, "1"); !ok {
		t.Error("GPU 1 memory lost because its utilisation read failed")
	}
}

// The real library: on a machine without a driver (CI, this repository's
// dev boxes) Init must fail cleanly with ErrNoDriver; with one, it reads.
func TestRealLibrary(t *testing.T) {
	src := New(nvml.New())
	defer src.Close()
	points, err := src.Gather(context.Background())
	if errors.Is(err, ErrNoDriver) {
		t.Logf("no NVIDIA driver here, as expected on CPU machines: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("real NVML: %v", err)
	}
	t.Logf("real NVML: %d points", len(points))
}
