package service

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/poolspec"
)

// contract is the service's table of docs/metrics.md: every name, and the
// labels besides pool.
var contract = map[string][]string{
	"prewarm_pool_mode":                              {"mode"},
	"prewarm_pool_wished_instances":                  nil,
	"prewarm_pool_desired_instances":                 nil,
	"prewarm_pool_planned_instances":                 nil,
	"prewarm_pool_current_instances":                 nil,
	"prewarm_pool_ready_instances":                   nil,
	"prewarm_pool_booting_instances":                 nil,
	"prewarm_pool_demand_rps":                        nil,
	"prewarm_pool_forecast_rps":                      {"bound"},
	"prewarm_pool_forecast_gate":                     {"level"},
	"prewarm_pool_forecast_mase":                     nil,
	"prewarm_pool_boot_delay_seconds":                nil,
	"prewarm_pool_warm_start_seconds":                nil,
	"prewarm_pool_capacity_short_seconds":            nil,
	"prewarm_pool_policy":                            {"candidate"},
	"prewarm_pool_slo_burn_rate":                     nil,
	"prewarm_pool_decisions_total":                   {"outcome"},
	"prewarm_pool_decision_failures_total":           nil,
	"prewarm_pool_gpu_hours_total":                   nil,
	"prewarm_pool_cost_total":                        nil,
	"prewarm_pool_static_cost_total":                 nil,
	"prewarm_refit_duration_seconds":                 nil,
	"prewarm_tick_duration_seconds":                  nil,
	"prewarm_last_successful_tick_timestamp_seconds": nil,
}

// After a few decisions (one failed) every series of the contract is
// exported, with the contract's labels, and the forecast's bounds and the
// MASE are numbers.
func TestMetricsContract(t *testing.T) {
	r := newRig(t, 2, nil)
	start := r.clock.Now()
	r.writeDemand(t, start.Add(-15*24*time.Hour), start, noisyDaily)
	r.tickEvery(t, 30*time.Minute, 52, noisyDaily) // a day and more, so the MASE is scored
	r.store.fail("requests_rps", true)
	r.clock.Advance(time.Minute)
	r.svc.Tick(t.Context())
	r.store.fail("requests_rps", false)

	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		want, ok := contract[mf.GetName()]
		if !ok {
			continue
		}
		seen[mf.GetName()] = true
		for _, m := range mf.GetMetric() {
			labels := slices.Collect(maps.Keys(labelsOf(m)))
			wantLabels := append([]string{"pool"}, want...)
			if mf.GetName() == "prewarm_tick_duration_seconds" || mf.GetName() == "prewarm_last_successful_tick_timestamp_seconds" {
				wantLabels = nil // no pool label
			}
			slices.Sort(labels)
			slices.Sort(wantLabels)
			if !slices.Equal(labels, wantLabels) {
				t.Errorf("%s has labels %v, want %v", mf.GetName(), labels, wantLabels)
			}
		}
	}
	for name := range contract {
		if !seen[name] {
			t.Errorf("%s is not exported", name)
		}
	}
	st, _ := r.svc.PoolStatus(testPool)
	if !st.ForecastMASE.Known() || st.ForecastMASE <= 0 {
		t.Errorf("MASE %v after a day of forecasts, want a positive number", st.ForecastMASE)
	}
	if got := testGauge(t, r.reg, "prewarm_pool_forecast_mase"); got != float64(st.ForecastMASE) {
		t.Errorf("MASE gauge %v, status %v", got, st.ForecastMASE)
	}
	t.Logf("MASE over the last day: %.3f; cost %.1f of static %.1f", st.ForecastMASE, st.Cost.Cost, st.Cost.StaticCost)
	if st.Cost.GPUHours <= 0 || st.Cost.StaticCost <= st.Cost.Cost {
		t.Errorf("cost %+v: want hours billed, below the static fleet's", st.Cost)
	}
}

// electionContract is the election's part of docs/metrics.md: every name
// and its labels (no pool label: they describe the replica).
var electionContract = map[string][]string{
	"prewarm_election_owned_buckets":        {"identity"},
	"prewarm_election_leader_changes_total": {"identity", "change"},
}

// With election on, a replica exports the buckets it owns and counts
// those it gains and loses, under the contract's names and labels, and
// docs/metrics.md lists each of them.
func TestElectionMetricsContract(t *testing.T) {
	fleet := actuatortest.New("fake").AddPool(testPool, 1, 1, 50)
	owner := newOwner("a")
	a, sh := replica(t, "a", owner, nil, fleet, poolspec.ModeActive)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.svc.watchShards(ctx, make(chan struct{}, 1))
	}()
	defer func() {
		cancel()
		<-done
	}()
	values := func() map[string]float64 {
		t.Helper()
		mfs, err := a.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			want, ok := electionContract[mf.GetName()]
			if !ok {
				continue
			}
			for _, m := range mf.GetMetric() {
				ls, name := labelsOf(m), mf.GetName()
				if change, ok := ls["change"]; ok {
					name += "{" + change + "}"
				}
				labels := slices.Sorted(maps.Keys(ls))
				if w := slices.Sorted(slices.Values(want)); !slices.Equal(labels, w) {
					t.Errorf("%s has labels %v, want %v", mf.GetName(), labels, w)
				}
				out[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		return out
	}
	wait := func(step string, want map[string]float64) {
		t.Helper()
		var got map[string]float64
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if got = values(); maps.Equal(got, want) {
				return
			}
		}
		t.Errorf("%s: %v, want %v", step, got, want)
	}
	wait("owning the bucket", map[string]float64{"prewarm_election_owned_buckets": 1,
		"prewarm_election_leader_changes_total{gained}": 1, "prewarm_election_leader_changes_total{lost}": 0})
	owner.Store(ptr("b"))
	sh.changes <- struct{}{}
	wait("after losing it", map[string]float64{"prewarm_election_owned_buckets": 0,
		"prewarm_election_leader_changes_total{gained}": 1, "prewarm_election_leader_changes_total{lost}": 1})

	doc, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range electionContract {
		if !strings.Contains(string(doc), "`"+name) {
			t.Errorf("docs/metrics.md does not list %s", name)
		}
	}
}

// labelsOf returns a series' labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
