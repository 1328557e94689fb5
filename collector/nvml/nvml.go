package nvml

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/prewarm/prewarm/collector"
	"github.com/prewarm/prewarm/store"
)

// Library is the part of NVML the source uses; nvml.New() and
// mock.Interface implement it.
type Library interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(int) (nvml.Device, nvml.Return)
	GpmSampleAlloc() (nvml.GpmSample, nvml.Return)
	GpmMetricsGet(*nvml.GpmMetricsGetType) nvml.Return
}

// ErrNoDriver means libnvidia-ml could not be loaded: no NVIDIA driver.
var ErrNoDriver = errors.New("NVIDIA driver not found (libnvidia-ml.so.1 could not be loaded)")

// notAvailable is NVML's NVML_VALUE_NOT_AVAILABLE for unsigned 64-bit values
// (a process's memory under some configurations).
const notAvailable = ^uint64(0)

// Source reads every GPU NVML sees.
type Source struct {
	lib     Library
	inited  bool
	devices []*device
}

var _ collector.Source = (*Source)(nil)

type device struct {
	handle nvml.Device
	tags   map[string]string
	gpm    bool
	prev   nvml.GpmSample // last GPM sample, nil until the first
}

// New returns a Source over lib (nvml.New() for the real library).
func New(lib Library) *Source { return &Source{lib: lib} }

// Name is "nvml".
func (s *Source) Name() string { return "nvml" }

// Gather initialises NVML on first use (retrying each call until it works)
// and reads every GPU. A GPU whose reads fail adds to the returned error;
// the other GPUs' points are returned with it.
func (s *Source) Gather(ctx context.Context) ([]store.Point, error) {
	if err := s.init(); err != nil {
		return nil, err
	}
	var points []store.Point
	var errs []error
	for _, d := range s.devices {
		if ctx.Err() != nil {
			return points, ctx.Err()
		}
		pts, err := s.read(d)
		points = append(points, pts...)
		if err != nil {
			errs = append(errs, fmt.Errorf("nvml gpu %s (%s): %w", d.tags[store.TagGPU], d.tags[store.TagUUID], err))
		}
	}
	return points, errors.Join(errs...)
}

func (s *Source) init() error {
	if s.inited {
		return nil
	}
	switch ret := s.lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return ErrNoDriver
	default:
		return fmt.Errorf("nvml init: %w", ret)
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		s.lib.Shutdown()
		return fmt.Errorf("nvml device count: %w", ret)
	}
	devices := make([]*device, 0, n)
	for i := range n {
		h, ret := s.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			s.lib.Shutdown()
			return fmt.Errorf("nvml device %d handle: %w", i, ret)
		}
		tags := map[string]string{store.TagSource: "nvml", store.TagGPU: strconv.Itoa(i)}
		if uuid, ret := h.GetUUID(); ret == nvml.SUCCESS {
			tags[store.TagUUID] = uuid
		}
		if name, ret := h.GetName(); ret == nvml.SUCCESS {
			tags[store.TagModel] = name
		}
		support, ret := h.GpmQueryDeviceSupport()
		devices = append(devices, &device{handle: h, tags: tags, gpm: ret == nvml.SUCCESS && support.IsSupportedDevice != 0})
	}
	s.devices, s.inited = devices, true
	return nil
}

// read returns one GPU's points. ERROR_NOT_SUPPORTED skips a metric quietly.
func (s *Source) read(d *device) ([]store.Point, error) {
	var points []store.Point
	var errs []error
	add := func(measurement string, v float64) {
		points = append(points, store.Point{Measurement: measurement, Tags: d.tags, Value: v})
	}
	check := func(what string, ret nvml.Return) bool {
		switch ret {
		case nvml.SUCCESS:
			return true
		case nvml.ERROR_NOT_SUPPORTED:
		default:
			errs = append(errs, fmt.Errorf("%s: %w", what, ret))
		}
		return false
	}
	if u, ret := d.handle.GetUtilizationRates(); check("utilization", ret) {
		add(store.GPUUtil, float64(u.Gpu))
	}
	if m, ret := d.handle.GetMemoryInfo(); check("memory", ret) {
		add(store.GPUMemUsedBytes, float64(m.Used))
		add(store.GPUMemFreeBytes, float64(m.Free))
		add(store.GPUMemTotalBytes, float64(m.Total))
	}
	if mw, ret := d.handle.GetPowerUsage(); check("power usage", ret) {
		add(store.GPUPowerWatts, float64(mw)/1000)
	}
	if mw, ret := d.handle.GetEnforcedPowerLimit(); check("power limit", ret) {
		add(store.GPUPowerLimitWatts, float64(mw)/1000)
	}
	if c, ret := d.handle.GetTemperature(nvml.TEMPERATURE_GPU); check("temperature", ret) {
		add(store.GPUTempCelsius, float64(c))
	}
	if procs, ret := d.handle.GetComputeRunningProcesses(); check("processes", ret) {
		add(store.GPUProcesses, float64(len(procs)))
		for _, p := range procs {
			if p.UsedGpuMemory == notAvailable {
				continue
			}
			tags := make(map[string]string, len(d.tags)+1)
			for k, v := range d.tags {
				tags[k] = v
			}
			tags[store.TagPID] = strconv.FormatUint(uint64(p.Pid), 10)
			points = append(points, store.Point{Measurement: store.GPUProcessMemUsedBytes, Tags: tags, Value: float64(p.UsedGpuMemory)})
		}
	}
	if d.gpm {
		if v, ok, err := s.smActivity(d); err != nil {
			errs = append(errs, err)
		} else if ok {
			add(store.GPUSMActive, v)
		}
	}
	return points, errors.Join(errs...)
}

// smActivity takes a GPM sample and, given the previous one, returns the SM
// utilisation between the two as a ratio (GPM reports percent).
func (s *Source) smActivity(d *device) (float64, bool, error) {
	cur, ret := s.lib.GpmSampleAlloc()
	if ret != nvml.SUCCESS {
		return 0, false, fmt.Errorf("gpm sample alloc: %w", ret)
	}
	if ret := d.handle.GpmSampleGet(cur); ret != nvml.SUCCESS {
		cur.Free()
		return 0, false, fmt.Errorf("gpm sample: %w", ret)
	}
	prev := d.prev
	d.prev = cur
	if prev == nil {
		return 0, false, nil
	}
	defer prev.Free()
	get := nvml.GpmMetricsGetType{NumMetrics: 1, Sample1: prev, Sample2: cur}
	get.Metrics[0].MetricId = uint32(nvml.GPM_METRIC_SM_UTIL)
	if ret := s.lib.GpmMetricsGet(&get); ret != nvml.SUCCESS {
		return 0, false, fmt.Errorf("gpm metrics: %w", ret)
	}
	m := get.Metrics[0]
	if nvml.Return(m.NvmlReturn) != nvml.SUCCESS {
		return 0, false, fmt.Errorf("gpm sm util: %w", nvml.Return(m.NvmlReturn))
	}
	return m.Value / 100, true, nil
}

// Close frees GPM samples and shuts NVML down if it was initialised.
func (s *Source) Close() error {
	if !s.inited {
		return nil
	}
	for _, d := range s.devices {
		if d.prev != nil {
			d.prev.Free()
			d.prev = nil
		}
	}
	s.inited = false
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %w", ret)
	}
	return nil
}
