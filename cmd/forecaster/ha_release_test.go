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

// Two replicas share a dry-run pool with election on, each with its API
// address on its member Lease ($POD_IP and the listen port). A release
// posted to the standby is passed on to the owner, which releases the
// instance; one the standby receives already forwarded is answered 503
// with Retry-After and the owner's name and releases nothing. The shared
// audit log holds exactly one release.
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
		start(t, forecaster, []string{"POD_NAME=" + name, "POD_IP=127.0.0.1", releasehook.EnvToken + "=" + haReleaseToken},
			"serve", "--config", config, "--store", "embedded:"+filepath.Join(dir, name+"-store"), "--listen", addrs[name],
			"--state", filepath.Join(dir, name+"-state.db"))
	}
	waitFor(t, 20*time.Second, "both replicas' first decisions", func() bool {
		_, okA := poolStatus(addrs["replica-a"])
		_, okB := poolStatus(addrs["replica-b"])
		return okA && okB
	})
	owner, standby := waitForOwner(t, addrs)

	release := func(addr string, forwarded bool) (*http.Response, releasehook.Reply) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+releasehook.Path,
			strings.NewReader(`{"kind":"idle","instance_id":"i-idle01","pool":"gpu","host":"gpu-07","gpu":"0"}`))
		req.Header.Set("Authorization", "Bearer "+haReleaseToken)
		if forwarded {
			req.Header.Set(releasehook.ForwardedHeader, "1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep releasehook.Reply
		json.NewDecoder(resp.Body).Decode(&rep)
		return resp, rep
	}
	// The standby learns the owner's address from its member Lease within
	// a retry period or two.
	var resp *http.Response
	var rep releasehook.Reply
	waitFor(t, 5*time.Second, "a release posted to the standby to be passed on", func() bool {
		resp, rep = release(addrs[standby], false)
		return resp.Header.Get(releasehook.ForwardedToHeader) != "" || rep.Outcome == "released"
	})
	if resp.StatusCode != http.StatusOK || rep.Outcome != "released" || rep.Pool != "gpu" ||
		resp.Header.Get(releasehook.ForwardedToHeader) != owner {
		t.Errorf("release posted to the standby %s: %d %+v (forwarded to %q), want 200 released in pool gpu by %s",
			standby, resp.StatusCode, rep, resp.Header.Get(releasehook.ForwardedToHeader), owner)
	}
	resp, rep = release(addrs[standby], true)
	if resp.StatusCode != http.StatusServiceUnavailable || rep.Outcome != "standby" || rep.Owner != owner ||
		resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a forwarded release reaching the standby %s: %d %+v (Retry-After %q), want 503 standby naming %s, Retry-After 1",
			standby, resp.StatusCode, rep, resp.Header.Get("Retry-After"), owner)
	}
	raw, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"op":"release"`); n != 1 {
		t.Errorf("the audit log holds %d releases, want exactly 1:\n%s", n, raw)
	}
}
