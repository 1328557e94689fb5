package state_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/service/state"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	mem := actuator.Memory{LastChange: actuator.Change{At: at, From: 1, To: 5, RequestID: "r1", Pending: true}}
	override := &state.ModeOverride{Mode: "active", ConfigMode: "forecast-only", At: at, By: "api 127.0.0.1:1"}
	for _, err := range []error{db.SaveActuator("a", mem), db.SaveController("a", []byte{1, 2, 3}, at.Add(time.Hour)), db.SaveMode("a", override)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A second process cannot open it while the first holds it.
	if _, err := state.Open(path, state.Options{LockTimeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("second open: %v", err)
	}
	db.Close()
	ro, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.Load("a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Actuator == nil || got.Actuator.LastChange != mem.LastChange || string(got.Controller) != "\x01\x02\x03" ||
		!got.NextRefit.Equal(at.Add(time.Hour)) || got.Mode == nil || *got.Mode != *override {
		t.Errorf("loaded %+v", got)
	}
	if none, err := ro.Load("b"); err != nil || none.Actuator != nil || none.Controller != nil || none.Mode != nil {
		t.Errorf("unknown pool: %+v, %v", none, err)
	}
}

func TestClearMode(t *testing.T) {
	db, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SaveMode("a", &state.ModeOverride{Mode: "paused"})
	db.SaveMode("a", nil)
	if got, _ := db.Load("a"); got.Mode != nil {
		t.Errorf("mode = %+v after clearing", got.Mode)
	}
}

// A late save never overwrites a newer one: a confirmation saved without
// waiting cannot undo the next pending change, even across a reopen.
func TestNewestSaveWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i := range 50 { // confirmations (not waited for) and pending changes (waited for), interleaved
		db.SaveActuator("a", actuator.Memory{LastChange: actuator.Change{At: at.Add(time.Duration(i) * time.Minute), To: i}})
		db.SaveActuator("a", actuator.Memory{LastChange: actuator.Change{At: at.Add(time.Duration(i) * time.Minute), To: i + 1, Pending: true}})
	}
	db.Close()
	db, err = state.Open(path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, _ := db.Load("a"); got.Actuator == nil || got.Actuator.LastChange.To != 50 || !got.Actuator.LastChange.Pending {
		t.Fatalf("loaded %+v, want the last pending change (to 50)", got.Actuator)
	}
	db.SaveActuator("a", actuator.Memory{LastChange: actuator.Change{To: 51, Pending: true}})
	if got, _ := db.Load("a"); got.Actuator.LastChange.To != 51 {
		t.Errorf("a save after the reopen lost to an older one: %+v", got.Actuator)
	}
}
