package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// History imported while the service is stopped is used at its next start,
// although its state file, written when the store held no history, had
// scheduled the next refit hours ahead: the first decision after the
// restart follows the model. Real binaries, one embedded store, one state
// file.
func TestImportBeforeARestartIsUsedAtOnce(t *testing.T) {
	forecaster, _ := binaries(t)
	dir := t.TempDir()
	db := "embedded:" + filepath.Join(dir, "prewarm.db")
	statePath := filepath.Join(dir, "state.db")
	cfg := filepath.Join(dir, "forecaster.yaml")
	if err := os.WriteFile(cfg, []byte(`interval: 5s
pools:
  - name: api
    mode: forecast-only
    backend: dryrun
    max: 20
    rps_per_instance: 10
`), 0o600); err != nil {
		t.Fatal(err)
	}
	serveOnce := func(what string) (firstGate, reason, log string) {
		addr := freeAddr(t)
		p := start(t, forecaster, nil, "serve", "--config", cfg, "--store", db, "--listen", addr, "--state", statePath)
		var gate string
		waitFor(t, 30*time.Second, what, func() bool {
			st, ok := poolStatus(addr)
			gate, reason = st.Gate, st.GateReason
			return ok && !st.At.IsZero()
		})
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
		return gate, reason, p.output()
	}
	if gate, reason, log := serveOnce("the first decision on an empty store"); gate == planner.GateModel {
		t.Fatalf("on an empty store the first decision followed the model (%s)\n%s", reason, log)
	}

	export := filepath.Join(dir, "export.csv")
	var csv strings.Builder
	csv.WriteString("time,requests\n")
	end := time.Now().UTC().Truncate(5 * time.Minute)
	for ts := end.AddDate(0, 0, -14); ts.Before(end); ts = ts.Add(5 * time.Minute) {
		h := float64(ts.Hour()) + float64(ts.Minute())/60
		fmt.Fprintf(&csv, "%s,%.0f\n", ts.Format(time.RFC3339), 300*(50-40*math.Cos(2*math.Pi*(h-3)/24)))
	}
	if err := os.WriteFile(export, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runToEnd(t, time.Minute, forecaster, nil,
		"import", "--input", export, "--pool", "api", "--counts", "--store", db); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}

	if gate, reason, log := serveOnce("the first decision after the import"); gate != planner.GateModel {
		t.Errorf("after the import, the first decision of the restarted service: gate %s (%s), want the model\n%s", gate, reason, log)
	}
}
