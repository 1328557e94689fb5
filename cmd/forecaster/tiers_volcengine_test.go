package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
)

// The tier test's pool: its name, the stand-in's scaling group it drives
// (options.scaling_group) and the decision interval.
const (
	tierPool     = "gpu"
	tierGroup    = "scg-gpu"
	tierInterval = 2 * time.Second
)

// The spot and warm tiers of a volcengine pool, end to end: the real
// forecaster serve binary, as its own process, runs an active pool with
// a spot: block (share 0.75 above an on-demand base of 2) and a
// warm_start (500ms, below its boot_delay of 2s) against the loopback
// Volcengine stand-in, a group in ScalingMode recycle that starts empty
// (fallback on_demand) or serving 5 on-demand members (fallback none).
// The service
//
//  1. sets the group's InstancesDistribution to the spot block: base 2,
//     round(100 × (1 − 0.75)) = 25% on demand above it, remedy on, and
//     CompensateWithOnDemand as the fallback says;
//  2. keeps the group's stopped members at the warm size its API reports
//     for the pool (GET /api/v1/pools/gpu, "warm" and tiers.warm) within
//     a few intervals, and at the decisions after; in the group that
//     started empty, the running members split into on demand and spot as
//     the reported tiers say (the warm tier recycles its own launches,
//     not the members launched to serve);
//  3. after a spot stock-out, with fallback on_demand, gets its desired
//     size served again within one decision interval by on-demand members
//     that replace the spot ones; with fallback none the group stays short
//     by the reclaimed members (which shows that check can fail);
//  4. with fallback on_demand, once spot is back (it returns while the
//     on-demand stand-ins boot), moves them back to spot within a few
//     decision intervals: the group runs the reported tiers at the
//     desired size again, its warm tier kept, and serves no fewer than
//     the desired size meanwhile.
func TestServeRunsTheVolcengineTiers(t *testing.T) {
	forecaster, _ := binaries(t) // skips with -short
	cases := []struct {
		fallback   string
		compensate bool     // the group's CompensateWithOnDemand
		restored   bool     // one interval after the stock-out, the desired size serves again
		members    []string // the group's on-demand members at the start
	}{
		{planner.SpotFallbackOnDemand, true, true, nil},
		{planner.SpotFallbackNone, false, false, []string{"i-1", "i-2", "i-3", "i-4", "i-5"}},
	}
	for _, tc := range cases {
		t.Run("fallback "+tc.fallback, func(t *testing.T) {
			t.Parallel()
			vg := volcenginetest.New()
			t.Cleanup(vg.Close)
			vg.BootDelay, vg.WarmStart = time.Second, 300*time.Millisecond
			vg.AddGroup(volcenginetest.Group{ID: tierGroup, Max: 20, Desired: len(tc.members), ScalingMode: volcenginetest.ScalingModeRecycle,
				InstanceIDs: tc.members})
			dir := t.TempDir()
			dbPath := filepath.Join(dir, "prewarm.db")
			seedTierDemand(t, dbPath)
			cfg := filepath.Join(dir, "forecaster.yaml")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`interval: %v
audit_log: %s
pools:
  - name: %s
    backend: volcengine
    mode: active
    max: 20
    max_step: 20
    min_interval: 0s
    rps_per_instance: 10
    boot_delay: 2s
    warm_start: 500ms
    spot: {share: 0.75, base_on_demand: 2, fallback: %s}
    gate: {min_seasons: 1}
    forecast: {step: 1m, refit_every: 1h, horizon: 10m, history: 3h, periods: []}
    tune: {enabled: false}
    options: {scaling_group: %s, release_mode: recycle}
`, tierInterval, filepath.Join(dir, "audit.jsonl"), tierPool, tc.fallback, tierGroup)), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"VOLCENGINE_ACCESS_KEY=" + volcenginetest.DefaultAccessKey, "VOLCENGINE_SECRET_KEY=" + volcenginetest.DefaultSecretKey,
				"VOLCENGINE_REGION=" + volcenginetest.DefaultRegion, "VOLCENGINE_ENDPOINT=" + vg.URL}
			addr := freeAddr(t)
			p := start(t, forecaster, env, "serve", "--config", cfg, "--store", "embedded:"+dbPath,
				"--state", filepath.Join(dir, "state.db"), "--listen", addr)
			var st service.PoolStatus
			var f volcenginetest.Tally
			defer func() {
				if t.Failed() {
					t.Logf("last status: desired %d, warm %d, ready %d, tiers %+v, outcome %s, error %q, reason %q\ngroup: %+v\nserve's log:\n%s",
						st.Desired, st.Warm, st.Ready, st.Tiers, st.Outcome, st.Error, st.Reason, f, p.output())
				}
			}()
			waitFor(t, 30*time.Second, "the first decision", func() bool {
				s, ok := poolStatus(addr)
				return ok && !s.At.IsZero()
			})
			began := time.Now()

			// 1. The spot mix, set at the first decision (before the resize).
			want := volcenginetest.Distribution{OnDemandBaseCapacity: 2, OnDemandPercentageAboveBaseCapacity: 25,
				SpotInstanceRemedy: true, CompensateWithOnDemand: tc.compensate}
			if g, _ := vg.Group(tierGroup); g.Distribution == nil || *g.Distribution != want {
				t.Errorf("the group's InstancesDistribution after the first decision: %+v, want %+v", g.Distribution, want)
			}

			// 2. The warm tier: the group keeps stopped what the service
			// reports, once the launches for it have booted and been
			// recycled, and at the decisions after.
			settled := func() bool {
				st, f = tierStatus(t, addr), vg.Tally(tierGroup)
				return st.Warm > 0 && f.Stopped == st.Warm && f.Desired == st.Desired && f.Serving == st.Desired && f.Running == st.Desired
			}
			waitFor(t, 5*tierInterval, "the group to keep the reported warm size stopped beside the desired size", settled)
			t.Logf("warm tier settled %v after the first decision: desired %d (tiers %+v), group %+v",
				time.Since(began).Round(time.Millisecond), st.Desired, st.Tiers, f)
			spot := planner.Spot{Share: 0.75, BaseOnDemand: 2, Fallback: tc.fallback}
			if st.Tiers.Warm != st.Warm || st.Tiers.Running() != st.Desired || st.Tiers.Spot == 0 || st.Spot == nil || *st.Spot != spot {
				t.Errorf("status: warm %d, desired %d, tiers %+v, spot %+v; want tiers.warm = warm, the running tiers adding up to desired with some on spot, spot %+v",
					st.Warm, st.Desired, st.Tiers, st.Spot, spot)
			}
			if onDemand := st.Tiers.Reserved + st.Tiers.OnDemand; tc.members == nil && (f.OnDemand != onDemand || f.Spot != st.Tiers.Spot) {
				t.Errorf("the group that started empty runs %d on demand and %d on spot, want the tiers' %d and %d (tiers %+v, members %+v)",
					f.OnDemand, f.Spot, onDemand, st.Tiers.Spot, st.Tiers, vg.Members(tierGroup))
			}
			settledAt := st.At
			waitFor(t, 3*tierInterval, "two more decisions", func() bool {
				if !settled() {
					t.Fatalf("at the decision of %s the group left the warm tier: status warm %d, desired %d; group %+v",
						st.At.Format("15:04:05.000"), st.Warm, st.Desired, f)
				}
				return st.At.Sub(settledAt) >= tierInterval+tierInterval/2
			})
			if f.Spot == 0 {
				t.Fatalf("no member runs on spot before the stock-out (group %+v): nothing to take away", f)
			}

			// 3. A spot stock-out.
			before := f
			lost := vg.StockOut(tierGroup)
			outAt := time.Now()
			if len(lost) != before.Spot {
				t.Fatalf("the stock-out reclaimed %v, want the %d running spot members", lost, before.Spot)
			}
			if tc.restored {
				// The group answers at once on demand; spot returns while
				// those stand-ins boot, before any probe for it could find
				// the zone still out of stock (and wait out
				// options.spot_return_after).
				if f = vg.Tally(tierGroup); f.Spot != 0 || f.OnDemand != before.OnDemand+len(lost) || f.Running != st.Desired {
					t.Errorf("at the stock-out: group %+v, want %d running, the %d on demand before and %d on demand replacing the spot ones",
						f, st.Desired, before.OnDemand, len(lost))
				}
				vg.SpotReturns(tierGroup)
				var low sync.Mutex
				leastServing := st.Desired
				vg.OnCall(func(volcenginetest.Call) {
					n := vg.Tally(tierGroup).Serving
					low.Lock()
					defer low.Unlock()
					if time.Since(outAt) > vg.BootDelay+vg.BootDelay/2 { // the stand-ins serve
						leastServing = min(leastServing, n)
					}
				})
				waitFor(t, tierInterval, "the desired size to serve again on demand", func() bool {
					f = vg.Tally(tierGroup)
					return f.Serving >= st.Desired
				})
				t.Logf("the group served its %d again %v after the stock-out took %d spot members",
					st.Desired, time.Since(outAt).Round(time.Millisecond), len(lost))
				// 4. The stand-ins move back to spot: the group runs the
				// reported tiers again, its desired size the service's.
				onDemand := st.Tiers.Reserved + st.Tiers.OnDemand
				waitFor(t, 5*tierInterval, "the stand-ins to move back to spot", func() bool {
					f = vg.Tally(tierGroup)
					return f.Desired == st.Desired && f.Running == st.Desired && f.Serving == st.Desired &&
						f.Spot == st.Tiers.Spot && f.OnDemand == onDemand && f.Stopped == st.Warm
				})
				t.Logf("back on spot %v after the stock-out: group %+v", time.Since(outAt).Round(time.Millisecond), f)
				low.Lock()
				if leastServing < st.Desired {
					t.Errorf("the serving count dropped to %d while the stand-ins moved back to spot, want at least %d", leastServing, st.Desired)
				}
				low.Unlock()
			} else {
				time.Sleep(tierInterval)
				if f = vg.Tally(tierGroup); f.Serving != st.Desired-len(lost) || f.Running != st.Desired-len(lost) {
					t.Errorf("one interval after the stock-out without an on-demand fallback: group %+v, want %d running and serving, short by the %d reclaimed",
						f, st.Desired-len(lost), len(lost))
				}
			}
			// The service's own reading of the group: the decision after
			// the replacements' boot sees them serve, and the warm tier is
			// still what it reports.
			wantReady := st.Desired
			if !tc.restored {
				wantReady -= len(lost)
			}
			waitFor(t, 3*tierInterval, fmt.Sprintf("a decision that sees %d serving and keeps the warm tier", wantReady), func() bool {
				st, f = tierStatus(t, addr), vg.Tally(tierGroup)
				return st.At.After(outAt.Add(vg.BootDelay)) && st.Ready == wantReady && f.Stopped == st.Warm
			})
			if st.Error != "" || strings.Contains(p.output(), "level=ERROR") {
				t.Errorf("the service reported errors: %q", st.Error)
			}
		})
	}
}

// seedTierDemand writes the tier test's demand into a new embedded store
// at path: 3 hours of 40 req/s a minute with one minute at 100 req/s 20
// minutes ago (the recent peak the warm tier covers), and the live 40
// req/s every 250 ms from a minute ago until two minutes ahead, so that
// each decision of the test finds a sample in its interval.
func seedTierDemand(t *testing.T, path string) {
	t.Helper()
	db, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	tags := map[string]string{store.TagPool: tierPool}
	var pts []store.Point
	for ts := now.Add(-3 * time.Hour).Truncate(time.Minute); ts.Before(now.Add(-time.Minute)); ts = ts.Add(time.Minute) {
		v := 40.0
		if ago := now.Sub(ts); ago > 20*time.Minute && ago <= 21*time.Minute {
			v = 100
		}
		pts = append(pts, store.Point{Measurement: store.ServiceRequestRate, Tags: tags, Value: v, Time: ts})
	}
	for ts := now.Add(-time.Minute); ts.Before(now.Add(2 * time.Minute)); ts = ts.Add(250 * time.Millisecond) {
		pts = append(pts, store.Point{Measurement: store.ServiceRequestRate, Tags: tags, Value: 40, Time: ts})
	}
	if err := db.Write(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
}

// tierStatus reads GET /api/v1/pools/gpu of a running forecaster.
func tierStatus(t *testing.T, addr string) service.PoolStatus {
	t.Helper()
	var st service.PoolStatus
	if err := json.Unmarshal(httpGet(t, "http://"+addr+"/api/v1/pools/"+tierPool), &st); err != nil {
		t.Fatal(err)
	}
	return st
}
