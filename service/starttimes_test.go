package service

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

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
