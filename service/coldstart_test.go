package service

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/poolspec"
)

// seasonNaive forecasts the value a day (48 steps) earlier with no
// interval: a seasonal-naive fit on a short history.
type seasonNaive struct{}

func (seasonNaive) Forecast(history []float64, horizon int, level float64) (model.Forecast, error) {
	f := model.Forecast{Method: "snaive(48)", Level: level}
	for h := range horizon {
		v := history[max(0, len(history)-48+h%48)]
		f.Mean, f.Lower, f.Upper = append(f.Mean, v), append(f.Lower, v), append(f.Upper, v)
	}
	return f, nil
}

// bumpy is demand whose level moves from hour to hour and day to day.
func bumpy(ts time.Time) float64 {
	x := float64(ts.Unix()) / 1800
	return 20 + 15*math.Sin(x*0.7) + 10*math.Sin(x/9)
}

// A pool started on a day and a half of varying history (as after
// 'forecaster import'), whose model's forecast has no band: the status
// shows a band as wide as most of the history's season-ago differences,
// and says that the cold-start rule is in charge until the model has 2d
// of history, in the JSON the API serves; with two weeks of history, once
// the model's first forecasts are scored, it says the model is.
func TestColdStartStatusSaysWhoIsInCharge(t *testing.T) {
	r := newRigWith(t, 2, nil, func(d *Deps) { d.NewModel = func([]int) model.Forecaster { return seasonNaive{} } })
	now := r.clock.Now()
	r.writeDemand(t, now.Add(-36*time.Hour), now.Add(time.Minute), bumpy)
	if err := r.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := r.svc.Status()[0]
	// The history the refit read: 30-minute means of the per-minute demand.
	window := func(from time.Time) float64 {
		sum := 0.0
		for m := range 30 {
			sum += bumpy(from.Add(time.Duration(m) * time.Minute))
		}
		return sum / 30
	}
	var diffs, recent []float64
	for ts := now.Add(-12 * time.Hour); ts.Before(now); ts = ts.Add(30 * time.Minute) {
		diffs = append(diffs, math.Abs(window(ts)-window(ts.Add(-24*time.Hour))))
	}
	for ts := now.Add(-6 * time.Hour); ts.Before(now); ts = ts.Add(30 * time.Minute) {
		recent = append(recent, window(ts))
	}
	t.Logf("band %v–%v around %v; the last 6 hours' variation alone, 1.28·sd, is ±%.3g", st.Forecast.Lower, st.Forecast.Upper, st.Forecast.Mean, 1.2816*sdOf(recent))
	covered := 0
	for _, d := range diffs {
		if float64(st.Forecast.Mean)+d <= float64(st.Forecast.Upper) {
			covered++
		}
	}
	if f := st.Forecast; !(f.Upper > f.Lower) || covered < len(diffs)*3/4 {
		t.Errorf("band %v–%v around %v covers %d of %d season-ago differences; want most", f.Lower, f.Upper, f.Mean, covered, len(diffs))
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		InCharge       string `json:"in_charge"`
		InChargeReason string `json:"in_charge_reason"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.InCharge != control.ChargeColdStart || !strings.Contains(got.InChargeReason, "until the model has 2d of history") ||
		!strings.Contains(got.InChargeReason, "snaive(48)") {
		t.Errorf("in charge %q (%s), want the cold start until 2d, naming the guess", got.InCharge, got.InChargeReason)
	}
	if sv := r.svc.pools[0].views.schedule; sv.InCharge != control.ChargeColdStart {
		t.Errorf("the schedule says %q is in charge, want the cold start", sv.InCharge)
	}

	warm := newRig(t, 2, nil)
	now = warm.clock.Now()
	warm.writeDemand(t, now.Add(-14*24*time.Hour), now.Add(time.Minute), daily)
	for range 2 { // the second refit scores the first's forecasts
		if err := warm.svc.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		from := warm.clock.Now()
		warm.clock.Advance(3 * time.Hour)
		warm.writeDemand(t, from.Add(time.Minute), warm.clock.Now().Add(time.Minute), daily)
	}
	if err := warm.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := warm.svc.Status()[0]; st.InCharge != control.ChargeModel {
		t.Errorf("with two weeks scored: in charge %q (%s), want the model", st.InCharge, st.InChargeReason)
	}
}

// An active pool on dryrun restarted on its state file reads, from the
// first decision, the size it was last set to, all of it ready: not no
// size (or a shortage) until the next change.
func TestDryRunPoolReadsItsSizeAfterARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	dry := func(d *Deps) {
		d.Backend = func(ctx context.Context, pc actuator.PoolConfig) (actuator.Actuator, error) {
			return dryrun.Factory(quietLogger())(ctx, pc, actuator.OptionValues{})
		}
	}
	steady := func(time.Time) float64 { return 60 }
	st := openState(t, path)
	first := newRigWith(t, 0, func(p *poolspec.Pool) { p.Backend = dryrun.Name }, func(d *Deps) { dry(d); d.State = st })
	for range 5 {
		first.tickWithDemand(t, 60)
	}
	before := first.svc.Status()[0]
	if !before.CurrentKnown || before.Ready == 0 {
		t.Fatalf("before the restart: %+v", before)
	}
	st.Close()

	again := newRigWith(t, 0, func(p *poolspec.Pool) { p.Backend = dryrun.Name }, func(d *Deps) { dry(d); d.State = openState(t, path) })
	again.clock.Advance(5 * time.Minute)
	again.store.Querier, again.db = first.db, first.db
	again.writeDemand(t, again.clock.Now().Add(-time.Minute), again.clock.Now(), steady)
	if err := again.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := again.svc.Status()[0]
	if !got.CurrentKnown || got.Ready != before.Desired || got.CapacityShortSeconds != 0 || got.Desired > got.Ready {
		t.Errorf("after the restart: known %v, ready %d, desired %d, short %vs; want %d ready, not short",
			got.CurrentKnown, got.Ready, got.Desired, got.CapacityShortSeconds, before.Desired)
	}
}

// A state file in the older layout (format 1: values without sequence
// numbers), holding a controller state of an older encoding and a next
// refit two hours ahead, is migrated at start: the actuator's last change
// is kept, the controller's memory is not trusted, and the saved refit
// time does not hold the refit back.
func TestOlderStateFileIsMigratedAndDoesNotBlockRefits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	mem, err := json.Marshal(actuator.Memory{LastChange: actuator.Change{At: start.Add(-time.Hour), From: 2, To: 7, RequestID: "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	var ctl strings.Builder
	if err := gob.NewEncoder(&ctl).Encode(control.State{Version: control.StateVersion - 1}); err != nil {
		t.Fatal(err)
	}
	refit, _ := start.Add(2 * time.Hour).MarshalText()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket([]byte("meta"))
		if err == nil {
			err = meta.Put([]byte("format"), []byte("prewarm-state/1"))
		}
		if err != nil {
			return err
		}
		pools, err := tx.CreateBucket([]byte("pools"))
		if err != nil {
			return err
		}
		b, err := pools.CreateBucket([]byte(testPool))
		if err != nil {
			return err
		}
		for k, v := range map[string][]byte{"actuator": mem, "controller": []byte(ctl.String()), "next_refit": refit} {
			if v[0] == 0 {
				t.Fatalf("%s starts with a zero byte: not a format-1 bare value", k)
			}
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	r := newRigWith(t, 7, nil, func(d *Deps) { d.State = openState(t, path) })
	r.writeDemand(t, start.Add(-15*24*time.Hour), start.Add(time.Minute), daily)
	if err := r.svc.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := r.svc.Status()[0]
	if st.LastRefit.IsZero() || st.LastRefit.After(start) || !st.NextRefit.After(start) {
		t.Errorf("last refit %v, next %v: want a refit at the first decision, not at the saved %v", st.LastRefit, st.NextRefit, start.Add(2*time.Hour))
	}
	if st.Applied == nil || st.Applied.RequestID != "r1" && st.Applied.To == 0 {
		t.Errorf("applied %+v: want the migrated last change (or a newer one)", st.Applied)
	}
}

// sdOf is the sample standard deviation of x.
func sdOf(x []float64) float64 {
	var sum, sq float64
	for _, v := range x {
		sum += v
		sq += v * v
	}
	n := float64(len(x))
	return math.Sqrt((sq/n - (sum/n)*(sum/n)) * n / (n - 1))
}
