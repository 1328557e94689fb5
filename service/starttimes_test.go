package service

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/internal/chromium"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/service/ui/uitest"
)

// A fleet that boots in 20 minutes under a pool whose boot_delay says 10:
// the status measures the starts. With learn_boot_delay off it says
// boot_delay is too short; with it on (the default) the plans ask the
// measured 90th percentile ahead, within 10% of the fleet's 20 minutes,
// and the status and the lead-time gauge say so.
func TestStatusMeasuresStartTimes(t *testing.T) {
	cases := []struct {
		name     string
		learn    bool
		lead     func(time.Duration) bool
		verdict  string
		wantLead string
		page     string // how the status page's Now card begins the lead time
	}{
		{"boot_delay kept", false, func(d time.Duration) bool { return d == 10*time.Minute }, "asked for too late", "10m", "10m boot_delay; starts: median 20m"},
		{"the measured starts replace boot_delay", true,
			func(d time.Duration) bool { return d >= 18*time.Minute && d <= 22*time.Minute }, "learn_boot_delay", "18m to 22m",
			"20m measured (boot_delay 10m); starts: median 20m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
			fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 20 * time.Minute})
			metrics, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			r.serveFleet(t, fleet, metrics, nil, func(p *poolspec.Pool) {
				p.Backend, p.Mode, p.LearnBootDelay = simulated.Name, poolspec.ModeActive, tc.learn
			})
			high := func(time.Time) float64 { return 150 }
			r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now(), high)
			r.tickEvery(t, time.Minute, 60, high)
			st := r.svc.Status()[0].StartTimes
			if st == nil || !st.Enough || st.Median < 18*time.Minute || st.Median > 22*time.Minute || st.Configured != 10*time.Minute {
				t.Fatalf("start times %+v, want a median near the fleet's 20m and boot_delay 10m", st)
			}
			if !tc.lead(st.LeadTime) || !strings.Contains(st.Verdict, tc.verdict) {
				t.Errorf("lead time %v, verdict %q; want %s and a verdict naming %q", st.LeadTime, st.Verdict, tc.wantLead, tc.verdict)
			}
			if got := testutil.ToFloat64(metrics.bootDelaySec.WithLabelValues(testPool)); got != st.LeadTime.Seconds() {
				t.Errorf("pool_boot_delay_seconds = %v, want the lead time in force, %v", got, st.LeadTime.Seconds())
			}
			if p := r.svc.pools[0]; p.plan.Fleet.BootDelay != st.LeadTime || p.spec.Fleet.BootDelay != 10*time.Minute ||
				p.ctl().Last().At.IsZero() {
				t.Errorf("the pool plans %v ahead (boot_delay %v, last refit %v); want the lead time %v, the file's 10m, and its forecast kept",
					p.plan.Fleet.BootDelay, p.spec.Fleet.BootDelay, p.ctl().Last().At, st.LeadTime)
			}
			t.Logf("%s", st.Verdict)
			r.checkNowCard(t, "start-times-"+strings.ReplaceAll(tc.name, " ", "-")+".png", "Lead time: "+tc.page)
		})
	}
}

// The measured lead replaces the one in force only when the starts
// disagree with it by half (startsOff), and it is then their 90th
// percentile to the second, at most the planner's longest delay.
func TestMeasuredLead(t *testing.T) {
	est := func(median, p90 time.Duration) control.StartEstimate {
		return control.StartEstimate{Starts: 10, Median: median, P90: p90}
	}
	cases := []struct {
		name   string
		est    control.StartEstimate
		lead   time.Duration
		want   time.Duration
		wantOK bool
	}{
		{"starts that fit keep the lead", est(9*time.Minute, 12*time.Minute), 10 * time.Minute, 10 * time.Minute, false},
		{"a P90 half as long again is too late", est(19*time.Minute, 20*time.Minute+400*time.Millisecond), 10 * time.Minute, 20 * time.Minute, true},
		{"a median under half asks too early", est(4*time.Minute, 6*time.Minute), 10 * time.Minute, 6 * time.Minute, true},
		{"the learned lead is stable", est(19*time.Minute, 20*time.Minute), 20 * time.Minute, 20 * time.Minute, false},
		{"a skewed learned lead stays put", est(2*time.Minute, 20*time.Minute), 20 * time.Minute, 20 * time.Minute, false},
		{"at most the longest delay", est(30*time.Hour, 30*time.Hour), 10 * time.Minute, planner.MaxDelay, true},
		{"no measured P90 keeps the lead", est(0, 0), 10 * time.Minute, 10 * time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := measuredLead(tc.est, tc.lead)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("measuredLead(%+v, %v) = %v, %v; want %v, %v", tc.est, tc.lead, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// The measured start times live in the state file: a restarted service
// plans with the lead they put in force from its first decision, without
// measuring five starts again.
func TestLearnedLeadSurvivesARestart(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 20 * time.Minute})
	st, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	active := func(p *poolspec.Pool) { p.Backend, p.Mode = simulated.Name, poolspec.ModeActive }
	r.serveFleet(t, fleet, nil, st, active)
	high := func(time.Time) float64 { return 150 }
	r.writeDemand(t, r.clock.Now().Add(-10*time.Minute), r.clock.Now(), high)
	r.tickEvery(t, time.Minute, 60, high)
	learned := r.svc.pools[0].plan.Fleet.BootDelay
	if learned < 18*time.Minute || learned > 22*time.Minute {
		t.Fatalf("before the restart the pool plans %v ahead, want near the fleet's 20m", learned)
	}
	st.Flush()

	r.serveFleet(t, fleet, nil, st, active)
	if got := r.svc.pools[0].plan.Fleet.BootDelay; got != 10*time.Minute {
		t.Fatalf("before its first decision the restarted pool plans %v ahead, want the file's 10m", got)
	}
	r.tickEvery(t, time.Minute, 1, high)
	p := r.svc.pools[0]
	if got := p.plan.Fleet.BootDelay; got != learned {
		t.Errorf("after a restart and one decision the pool plans %v ahead, want the learned %v", got, learned)
	}
	if s := r.svc.Status()[0].StartTimes; s == nil || !s.Enough || s.LeadTime != learned {
		t.Errorf("start times after the restart %+v, want enough restored starts and the lead %v", s, learned)
	}
}

// checkNowCard renders the status page in Chromium (not with -short),
// saves its screenshot as shot and checks that the Now card holds want.
func (r *rig) checkNowCard(t *testing.T, shot, want string) {
	t.Helper()
	if testing.Short() {
		return
	}
	chromium.Find(t)
	srv := httptest.NewServer(r.svc.Handler(HTTPOptions{}))
	defer srv.Close()
	page := uitest.Check(t, srv.URL, time.Second)
	chromium.SaveScreenshot(t, shot, page.Screenshot)
	if !strings.Contains(page.Now, want) {
		t.Errorf("the Now card lacks %q:\n%s", want, page.Now)
	}
}

// uncountedStops is a simulated fleet whose capacity read does not count
// the stopped instances of its warm pool, as a back-end that cannot.
type uncountedStops struct{ *simulated.Fleet }

func (u uncountedStops) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	c, err := u.Fleet.Capacity(ctx, pool)
	c.Stopped, c.StoppedKnown = 0, false
	return c, err
}

// A fleet whose stopped instances serve 3 minutes after they start, under
// a pool whose warm_start says 90s (its boot_delay, 10m, is right): the
// decisions measure the warm starts apart from the cold boots. With
// learn_boot_delay the plans use the measured warm start, within 10% of
// the fleet's 3 minutes, and the status, the warm-start gauge and the
// Now card say so; a restart keeps it. With learn_boot_delay off the
// verdict says warm_start is too short. A back-end that does not count
// its stopped instances teaches nothing of warm starts, and its mixed
// starts change neither setting.
func TestStatusMeasuresWarmStarts(t *testing.T) {
	cases := []struct {
		name      string
		learn     bool
		uncounted bool
		wantWarm  func(time.Duration) bool
		verdict   string // in the warm starts' verdict
		page      string // the Now card's warm starts
	}{
		{"the measured warm starts replace warm_start", true, false,
			func(d time.Duration) bool { return d >= 162*time.Second && d <= 198*time.Second }, "learn_boot_delay",
			"Warm starts: 2m45s measured (warm_start 1m30s); starts: median 2m45s"},
		{"warm_start kept", false, false, func(d time.Duration) bool { return d == 90*time.Second }, "asked for too late",
			"Warm starts: 1m30s warm_start; starts: median 2m45s"},
		{"stopped instances not counted: all cold", true, true, func(d time.Duration) bool { return d == 90*time.Second },
			"does not count its stopped instances", "Warm starts: 1m30s warm_start; no start measured yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
			fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute, WarmStart: 3 * time.Minute})
			var act actuator.Actuator = fleet
			if tc.uncounted {
				act = uncountedStops{fleet}
			}
			metrics, err := NewMetrics(prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			db, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			spec := func(p *poolspec.Pool) {
				p.Backend, p.Mode, p.LearnBootDelay, p.Fleet.WarmStart = simulated.Name, poolspec.ModeActive, tc.learn, 90*time.Second
				// A forecast of the 40-minute swings that the plan follows
				// down, so the warm tier keeps the peak's instances.
				p.Forecast.Step, p.Forecast.RefitEvery, p.Forecast.Horizon, p.Forecast.History = time.Minute, time.Hour, 30*time.Minute, 3*time.Hour
				p.Forecast.Periods, p.Gating.MinSeasons, p.ScaleInOnForecast, p.Tune.Enabled = []time.Duration{40 * time.Minute}, 1, true, false
			}
			r.serveFleetAs(t, fleet, act, metrics, db, spec)
			// Each rise of the swings starts the warm tier kept for the last
			// peak. A decision every 30s dates a start to 15s.
			r.writeDemand(t, r.clock.Now().Add(-3*time.Hour), r.clock.Now(), swings)
			r.tickEvery(t, 30*time.Second, 4*120, swings)
			st := r.svc.Status()[0].StartTimes
			if st == nil || st.Warm == nil {
				t.Fatalf("start times %+v, want warm starts beside the cold boots", st)
			}
			w, p := st.Warm, r.svc.pools[0]
			t.Logf("cold: %s\nwarm: %s", st.Verdict, w.Verdict)
			if tc.uncounted && (w.Starts != 0 || p.plan.Fleet.BootDelay != 10*time.Minute) {
				t.Errorf("%d warm starts measured and the plans boot in %v; want none and boot_delay's 10m, the starts mixed", w.Starts, p.plan.Fleet.BootDelay)
			}
			if !tc.uncounted && (!w.Enough || w.Median < 162*time.Second || w.Median > 198*time.Second || w.Configured != 90*time.Second) {
				t.Fatalf("warm starts %+v, want a median within 10%% of the fleet's 3m and warm_start 1m30s", w)
			}
			if !tc.wantWarm(w.LeadTime) || w.LeadTime != p.plan.Fleet.WarmStart || p.plan.Fleet.Lead() != w.LeadTime || p.spec.Fleet.WarmStart != 90*time.Second ||
				!strings.Contains(w.Verdict, tc.verdict) {
				t.Errorf("warm start in force %v (the plan's %v, lead %v, the file's %v), verdict %q; want it in the plan and a verdict naming %q",
					w.LeadTime, p.plan.Fleet.WarmStart, p.plan.Fleet.Lead(), p.spec.Fleet.WarmStart, w.Verdict, tc.verdict)
			}
			if got := testutil.ToFloat64(metrics.warmStartSec.WithLabelValues(testPool)); got != w.LeadTime.Seconds() {
				t.Errorf("pool_warm_start_seconds = %v, want the warm start in force, %v", got, w.LeadTime.Seconds())
			}
			r.checkNowCard(t, "warm-starts-"+strings.ReplaceAll(tc.name, " ", "-")+".png", tc.page)

			learned := p.plan.Fleet
			db.Flush()
			r.serveFleetAs(t, fleet, act, nil, db, spec)
			r.tickEvery(t, 30*time.Second, 1, swings)
			if got := r.svc.pools[0].plan.Fleet; got.WarmStart != learned.WarmStart || got.BootDelay != learned.BootDelay {
				t.Errorf("after a restart and one decision the pool plans warm starts of %v and boots of %v, want %v and %v as before",
					got.WarmStart, got.BootDelay, learned.WarmStart, learned.BootDelay)
			}
		})
	}
}

// swings is 20 minutes at 40 req/s, then 20 at 150, again and again.
func swings(ts time.Time) float64 {
	if ts.Unix()/60%40 < 20 {
		return 40
	}
	return 150
}
