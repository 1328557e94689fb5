package store

// The schema the collector writes and the forecaster reads: one place for
// the measurement names and tag keys, so a reader never spells a series
// differently from its writer.

// Measurement names written by the collector's sources. GPU series carry the tags
// TagHost, TagGPU (index), TagUUID and TagModel; service series TagService.
const (
	// GPUUtil is the percentage (0-100) of time a kernel ran on the GPU.
	GPUUtil = "gpu_util"
	// GPUSMActive is the ratio (0-1) of SM cycles with a warp resident
	// (DCGM_FI_PROF_SM_ACTIVE, NVML GPM SM utilisation).
	GPUSMActive = "gpu_sm_active"
	// GPUEngineActive is the ratio (0-1) of time the graphics/compute engine
	// was busy (DCGM_FI_PROF_GR_ENGINE_ACTIVE).
	GPUEngineActive = "gpu_gr_engine_active"
	// GPUMemUsedBytes, GPUMemFreeBytes and GPUMemTotalBytes describe frame
	// buffer memory.
	GPUMemUsedBytes  = "gpu_mem_used_bytes"
	GPUMemFreeBytes  = "gpu_mem_free_bytes"
	GPUMemTotalBytes = "gpu_mem_total_bytes"
	// GPUPowerWatts is the power draw; GPUPowerLimitWatts the enforced limit.
	GPUPowerWatts      = "gpu_power_watts"
	GPUPowerLimitWatts = "gpu_power_limit_watts"
	// GPUTempCelsius is the GPU core temperature.
	GPUTempCelsius = "gpu_temp_celsius"
	// GPUProcesses counts the compute processes holding the GPU.
	GPUProcesses = "gpu_processes"
	// GPUProcessMemUsedBytes is the memory one process (tag TagPID) holds.
	GPUProcessMemUsedBytes = "gpu_process_mem_used_bytes"

	// ServiceRequestRate is requests per second over the last interval.
	ServiceRequestRate = "service_request_rate"
	// ServiceQueueLength is the current queue length.
	ServiceQueueLength = "service_queue_length"
	// ServiceLatencySeconds is a latency quantile (tag TagQuantile) over the
	// last interval.
	ServiceLatencySeconds = "service_latency_seconds"
)

// Tag keys used on the points.
const (
	TagPool     = "pool"
	TagHost     = "host"
	TagGPU      = "gpu"
	TagUUID     = "uuid"
	TagModel    = "model"
	TagSource   = "source"
	TagPID      = "pid"
	TagService  = "service"
	TagQuantile = "quantile"
)
