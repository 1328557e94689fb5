// Package nvml is the collector source that reads the local GPUs through
// NVIDIA's management library (github.com/NVIDIA/go-nvml, cgo, libnvidia-ml
// loaded at run time): utilisation, memory used/free/total, power draw and
// enforced limit, temperature, the compute processes holding each GPU, and,
// on GPUs with GPM (Hopper and later), SM activity.
//
// The library sits behind Library, the few methods used, which go-nvml's
// real nvml.Interface and its mock.Interface both satisfy. Without a driver,
// Init fails with ERROR_LIBRARY_NOT_FOUND: Gather returns an error wrapping
// ErrNoDriver (the collector logs it once and keeps its other sources) and
// tries again next cycle, so a driver installed later is picked up.
package nvml
