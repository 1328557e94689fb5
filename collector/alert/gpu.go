package alert

import (
	"fmt"
	"time"

	"github.com/prewarm/prewarm/store"
)

// reading is one GPU's values in one cycle; the has* flags say which the
// sources reported.
type reading struct {
	subject
	util, sm, engine, memUsed, memFree, memTotal float64
	power, powerLimit                            float64
	hasUtil, hasSM, hasEngine, hasMem, hasPower  bool
	hasMemFree, hasMemTotal, hasPowerLimit       bool
}

// addGPUPoint files a GPU point under its host and UUID (or index).
// Points without a GPU, and per-process points, are skipped.
func addGPUPoint(readings map[string]*reading, p store.Point) {
	host, gpu, uuid := p.Tags[store.TagHost], p.Tags[store.TagGPU], p.Tags[store.TagUUID]
	if gpu == "" && uuid == "" || p.Tags[store.TagPID] != "" {
		return
	}
	id := uuid
	if id == "" {
		id = gpu
	}
	key := host + "/" + id
	r := readings[key]
	if r == nil {
		r = &reading{subject: subject{pool: p.Tags[store.TagPool], host: host, gpu: gpu, uuid: uuid}}
		readings[key] = r
	}
	switch p.Measurement {
	case store.GPUUtil:
		r.util, r.hasUtil = max(r.util, p.Value), true
	case store.GPUSMActive:
		r.sm, r.hasSM = max(r.sm, p.Value), true
	case store.GPUEngineActive:
		r.engine, r.hasEngine = max(r.engine, p.Value), true
	case store.GPUMemUsedBytes:
		r.memUsed, r.hasMem = p.Value, true
	case store.GPUMemFreeBytes:
		r.memFree, r.hasMemFree = p.Value, true
	case store.GPUMemTotalBytes:
		r.memTotal, r.hasMemTotal = p.Value, true
	case store.GPUPowerWatts:
		r.power, r.hasPower = p.Value, true
	case store.GPUPowerLimitWatts:
		r.powerLimit, r.hasPowerLimit = p.Value, true
	}
}

func (e *Engine) evaluateGPU(at time.Time, key string, r *reading) []Event {
	st := e.gpus[key]
	if st == nil || (e.rules.StaleAfter > 0 && at.Sub(st.lastSeen) > e.rules.StaleAfter) {
		if st != nil {
			e.clearFiring(st)
		}
		st = newState(r.subject)
		e.gpus[key] = st
	}
	st.lastSeen = at
	var events []Event

	if r.hasUtil {
		e.check(&events, st, RuleUtilHigh, e.rules.UtilHigh, at, r.util, r.util > e.rules.UtilHigh.Threshold, func() string {
			return fmt.Sprintf("utilisation %.0f%% (threshold %.0f%%)", r.util, e.rules.UtilHigh.Threshold)
		})
	}
	if total := r.memTotal; r.hasMem && (r.hasMemTotal || r.hasMemFree) {
		if !r.hasMemTotal {
			total = r.memUsed + r.memFree
		}
		if total > 0 {
			pct := 100 * r.memUsed / total
			e.check(&events, st, RuleMemHigh, e.rules.MemHigh, at, pct, pct > e.rules.MemHigh.Threshold, func() string {
				return fmt.Sprintf("memory %.1f%% used (threshold %.0f%%)", pct, e.rules.MemHigh.Threshold)
			})
		}
	}
	if r.hasPower && r.hasPowerLimit && r.powerLimit > 0 {
		pct := 100 * r.power / r.powerLimit
		e.check(&events, st, RulePowerHigh, e.rules.PowerHigh, at, pct, pct > e.rules.PowerHigh.Threshold, func() string {
			return fmt.Sprintf("power %.0f W = %.1f%% of the %.0f W limit (threshold %.0f%%)", r.power, pct, r.powerLimit, e.rules.PowerHigh.Threshold)
		})
	}
	if activity, ok := r.activity(); ok {
		e.check(&events, st, RuleIdle, e.rules.Idle, at, activity, activity < e.rules.Idle.Threshold, func() string {
			return fmt.Sprintf("compute activity %.1f%% < %.0f%% (%s)", activity, e.rules.Idle.Threshold, r.activityDetail())
		})
	}
	return events
}

// activity is the busiest of the compute signals, in percent.
func (r *reading) activity() (float64, bool) {
	a, ok := 0.0, false
	if r.hasUtil {
		a, ok = max(a, r.util), true
	}
	if r.hasSM {
		a, ok = max(a, 100*r.sm), true
	}
	if r.hasEngine {
		a, ok = max(a, 100*r.engine), true
	}
	return a, ok
}

func (r *reading) activityDetail() string {
	s := ""
	if r.hasUtil {
		s += fmt.Sprintf("util %.0f%%", r.util)
	}
	if r.hasSM {
		s += fmt.Sprintf(" SM %.1f%%", 100*r.sm)
	}
	if r.hasEngine {
		s += fmt.Sprintf(" engine %.1f%%", 100*r.engine)
	}
	return s
}
