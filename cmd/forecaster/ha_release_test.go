package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/election/kubetest"
)

const haReleaseToken = "release-token-of-the-ha-test"

// Two replicas share a dry-run pool with election on. A release posted to
// the standby is answered 503 with Retry-After and the owner's name and
// releases nothing; the same request posted to the owner releases the
// instance. The shared audit log holds exactly one release.
func TestOnlyTheOwnerReleases(t *testing.T) {
	forecaster, _ := binaries(t)
	dir := t.TempDir()
	kube := kubetest.NewServer()
	t.Cleanup(kube.Close)
	audit := filepath.Join(dir, "audit.jsonl")
	config := filepath.Join(dir, "forecaster.yaml")
	os.WriteFile(config, []byte(fmt.Sprintf(`interval: 2s
audit_log: %s
election:
  enabled: true
  namespace: prewarm
  buckets: 1
  lease_duration: 1s
  renew_deadline: 600ms
  retry_period: 100ms
  api_server: %s
pools:
  - name: gpu
    backend: dryrun
    mode: active
    min: 1
    max: 10
    rps_per_instance: 10
`, audit, kube.URL)), 0o600)
	addrs := map[string]string{}
	for _, name := range []string{"replica-a", "replica-b"} {
		addrs[name] = freeAddr(t)
		start(t, forecaster, []string{"POD_NAME=" + name, releasehook.EnvToken + "=" + haReleaseToken},
			"serve", "--config", config, "--store", "embedded:"+filepath.Join(dir, name+"-store"), "--listen", addrs[name],
			"--state", filepath.Join(dir, name+"-state.db"))
	}
	var owner, standby string
	waitFor(t, 20*time.Second, "one owner that the standby names", func() bool {
		a, okA := poolStatus(addrs["replica-a"])
		b, okB := poolStatus(addrs["replica-b"])
		if !okA || !okB || a.Election == nil || b.Election == nil {
			return false
		}
		switch {
		case a.Election.Owned && !b.Election.Owned && b.Election.Owner == "replica-a":
			owner, standby = "replica-a", "replica-b"
		case b.Election.Owned && !a.Election.Owned && a.Election.Owner == "replica-b":
			owner, standby = "replica-b", "replica-a"
		default:
			return false
		}
		return true
	})

	release := func(addr string) (int, string, releasehook.Reply) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+releasehook.Path,
			strings.NewReader(`{"kind":"idle","instance_id":"i-idle01","pool":"gpu","host":"gpu-07","gpu":"0"}`))
		req.Header.Set("Authorization", "Bearer "+haReleaseToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep releasehook.Reply
		json.NewDecoder(resp.Body).Decode(&rep)
		return resp.StatusCode, resp.Header.Get("Retry-After"), rep
	}
	if code, retry, rep := release(addrs[standby]); code != http.StatusServiceUnavailable || rep.Outcome != "standby" ||
		rep.Owner != owner || retry != "1" {
		t.Errorf("release posted to the standby %s: %d %+v (Retry-After %q), want 503 standby naming %s, Retry-After 1",
			standby, code, rep, retry, owner)
	}
	if code, _, rep := release(addrs[owner]); code != http.StatusOK || rep.Outcome != "released" || rep.Pool != "gpu" {
		t.Errorf("release posted to the owner %s: %d %+v, want 200 released in pool gpu", owner, code, rep)
	}
	raw, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"op":"release"`); n != 1 {
		t.Errorf("the audit log holds %d releases, want exactly 1:\n%s", n, raw)
	}
}
