package service

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store/embedded"
)

// With warm_start the live loop keeps the warm tier the decisions ask
// for: a boot after each change the simulated fleet holds that many
// stopped (or on their way), and the morning's rise starts them in the
// warm start rather than a cold boot.
func TestServeKeepsTheWarmTier(t *testing.T) {
	r := newRig(t, 2, func(p *poolspec.Pool) { p.Backend = simulated.Name })
	fleet := simulated.New(simulated.Options{Now: r.clock.Now, BootDelay: 10 * time.Minute, WarmStart: 90 * time.Second})
	r.serveFleet(t, fleet, nil, nil, func(p *poolspec.Pool) {
		p.Backend, p.Mode = simulated.Name, poolspec.ModeActive
		p.Fleet.WarmStart = 90 * time.Second
	})
	now := r.clock.Now() // midnight: the daily cycle rises towards 14:00
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	var kept, asked int
	for i := range 12 * 60 {
		r.tickEvery(t, time.Minute, 1, daily)
		if i == 6*60 {
			checkWarmSchedule(t, r) // the morning's rise lies ahead
		}
		st := r.svc.Status()[0]
		c := fleet.Counts(testPool)
		if c.Warm != st.Warm {
			t.Fatalf("%s: the fleet keeps %d warm, the decision asked for %d", r.clock.Now().Format("15:04"), c.Warm, st.Warm)
		}
		if st.Warm > 0 {
			asked++
			if c.Stopped+c.Warming+c.Draining >= min(st.Warm, st.Limits.MaxInstances-c.Desired) {
				kept++
			}
		}
	}
	u := fleet.Usage(testPool)
	if asked == 0 || u.WarmStarts == 0 || u.Stopped == 0 {
		t.Fatalf("warm asked at %d decisions, %d warm starts, %v stopped: want a warm tier in use", asked, u.WarmStarts, u.Stopped)
	}
	if float64(kept) < 0.95*float64(asked) {
		t.Errorf("the warm tier was at the planned size after %d of %d decisions that asked for one, want 95%%", kept, asked)
	}
	t.Logf("%d decisions asked for a warm tier, %d warm starts, %.1f stopped instance-hours", asked, u.WarmStarts, u.Stopped.Hours())
	r.checkNowCard(t, "warm-tier.png", fmt.Sprintf("Warm tier: %d kept stopped, each serving 90s after it starts", r.svc.Status()[0].Warm))
}

// A pool whose back-end keeps no stopped instances cannot plan warm
// starts: the service refuses it and names the key.
func TestWarmStartNeedsAWarmBackend(t *testing.T) {
	db, err := embedded.Open(filepath.Join(t.TempDir(), "test.db"), embedded.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := poolspec.DefaultFile()
	cfg.Pools = []poolspec.Pool{testSpec(testPool, func(p *poolspec.Pool) { p.Fleet.WarmStart = time.Minute })}
	fake := actuatortest.New("fake").AddPool(testPool, 2, 1, 50)
	_, err = New(context.Background(), &cfg, Deps{Store: db, Backend: fakeBackend(fake), Logger: quietLogger()})
	if err == nil || !strings.Contains(err.Error(), "warm_start") {
		t.Fatalf("New with warm_start on a back-end without a warm tier: %v, want an error naming warm_start", err)
	}
}

// kubeAPI is a loopback stand-in for the Kubernetes API server's scale
// subresources of two Deployments in namespace inference: the pool's
// workload, sd, and the warm tier's placeholder pods, sd-warm. The
// workload cannot be read for its ready pods (no get on it).
type kubeAPI struct {
	mu                     sync.Mutex
	replicas, placeholders int
}

func (k *kubeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var n *int
	switch r.URL.Path {
	case "/apis/apps/v1/namespaces/inference/deployments/sd/scale":
		n = &k.replicas
	case "/apis/apps/v1/namespaces/inference/deployments/sd-warm/scale":
		n = &k.placeholders
	default:
		http.Error(w, `{"kind":"Status","reason":"Forbidden","message":"forbidden"}`, http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPatch {
		var p struct{ Spec struct{ Replicas *int } }
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Spec.Replicas == nil {
			http.Error(w, `{"kind":"Status","reason":"BadRequest","message":"bad patch"}`, http.StatusBadRequest)
			return
		}
		*n = *p.Spec.Replicas
	}
	json.NewEncoder(w).Encode(map[string]any{"kind": "Scale", "spec": map[string]int{"replicas": *n}, "status": map[string]int{"replicas": *n}})
}

func (k *kubeAPI) sizes() (replicas, placeholders int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.replicas, k.placeholders
}

// On Kubernetes the warm tier is a Deployment of placeholder pods: the
// live loop keeps it at the warm tier the decisions ask for, beside the
// workload's own replicas, and empties it when the pool is dropped from
// the configuration.
func TestPlaceholderPodsFollowTheWarmTier(t *testing.T) {
	api := &kubeAPI{replicas: 2}
	srv := httptest.NewServer(api)
	defer srv.Close()
	warmPool := func(p *poolspec.Pool) {
		p.Backend, p.Mode, p.Fleet.WarmStart = kubescale.Name, poolspec.ModeActive, 2*time.Minute
	}
	r := newRigWith(t, 2, warmPool, func(d *Deps) {
		d.Backend = func(_ context.Context, c actuator.PoolConfig) (actuator.Actuator, error) {
			sc, err := kubescale.New(c.Name, kubescale.Config{APIServer: srv.URL, Namespace: "inference", Workload: "sd", Logger: quietLogger()})
			if err != nil {
				return nil, err
			}
			return sc.WithPlaceholder("sd-warm")
		}
	})
	now := r.clock.Now()
	r.writeDemand(t, now.Add(-15*24*time.Hour), now, daily)
	followed, asked := 0, 0
	for range 10 * 60 {
		r.tickEvery(t, time.Minute, 1, daily)
		st := r.svc.Status()[0]
		replicas, placeholders := api.sizes()
		if replicas != st.Desired {
			t.Fatalf("%s: workload at %d, the decision applied %d", r.clock.Now().Format("15:04"), replicas, st.Desired)
		}
		if st.Warm > 0 {
			asked++
		}
		if placeholders == st.Warm {
			followed++
		}
	}
	if asked == 0 || followed != 10*60 {
		t.Fatalf("%d decisions asked for a warm tier; the placeholders followed %d of %d", asked, followed, 10*60)
	}
	_, before := api.sizes()
	if before == 0 {
		t.Fatal("no placeholder pods before the pool is dropped: the check below would prove nothing")
	}
	file := poolspec.DefaultFile()
	file.Pools = []poolspec.Pool{testSpec("other", func(p *poolspec.Pool) { p.Backend, p.Mode = kubescale.Name, poolspec.ModeForecastOnly })}
	if err := r.svc.Reload(context.Background(), &file); err != nil {
		t.Fatal(err)
	}
	if _, after := api.sizes(); after != 0 {
		t.Errorf("the pool dropped from the configuration left %d placeholder pods (%d before), want 0", after, before)
	}
}

// checkWarmSchedule checks that /api/v1/pools/NAME/schedule shows the
// warm tier on the plan's steps.
func checkWarmSchedule(t *testing.T, r *rig) {
	t.Helper()
	var sched ScheduleView
	body := r.getJSON(t, "/api/v1/pools/"+testPool+"/schedule", &sched)
	warmSteps := 0
	for _, st := range sched.ModelPlan {
		if st.Warm > 0 {
			warmSteps++
		}
	}
	if warmSteps == 0 || !strings.Contains(string(body), `"warm":`) {
		t.Errorf("the schedule API shows no warm tier on the plan's %d steps:\n%.600s", len(sched.ModelPlan), body)
	}
}
