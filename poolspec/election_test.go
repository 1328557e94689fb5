package poolspec

import (
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/election"
)

// electionFile is a valid file with the election: block given.
func electionFile(block string) string {
	return "election:\n" + block + "pools:\n  - {name: a, backend: dryrun, max: 4, rps_per_instance: 1}\n"
}

// The election: block is off by default with the package's defaults, is
// read key by key, and each problem names its key and line.
func TestElectionBlock(t *testing.T) {
	f, err := Parse([]byte("pools:\n  - {name: a, backend: dryrun, max: 4, rps_per_instance: 1}\n"), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultElection(); f.Election != want || f.Election.Enabled {
		t.Errorf("default election %+v, want %+v, off", f.Election, want)
	}
	f, err = Parse([]byte(electionFile("  enabled: true\n  namespace: prewarm\n  identity: forecaster-0\n  buckets: 4\n"+
		"  lease_duration: 1s\n  renew_deadline: 600ms\n  retry_period: 100ms\n  api_server: http://127.0.0.1:8080\n")), "f.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Election{Enabled: true, Namespace: "prewarm", Identity: "forecaster-0", ShardPrefix: "prewarm-shard", Buckets: 4,
		Timings:   election.Timings{LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond},
		APIServer: "http://127.0.0.1:8080"}
	if f.Election != want {
		t.Errorf("election %+v, want %+v", f.Election, want)
	}

	for _, tt := range []struct{ block, want string }{
		{"  buckets: 0\n", "f.yaml:2: election.buckets: 0 is out of range: want 1 to 1000"},
		{"  namespace: Pre_Warm\n", "f.yaml:2: election.namespace: \"Pre_Warm\""},
		{"  identity: Pod_A\n", "f.yaml:2: election.identity: \"Pod_A\": must be a lower-case name"},
		{"  shard_prefix: -x\n", "f.yaml:2: election.shard_prefix: \"-x\""},
		{"  lease_duration: 1500ms\n", "f.yaml:2: election.lease_duration: 1.5s: must be whole seconds"},
		{"  lease_duration: 11m\n", "f.yaml:2: election.lease_duration: 11m0s: must be from 1s to 10m0s"},
		{"  retry_period: 1ms\n", "f.yaml:2: election.retry_period: 1ms: must be at least 10ms"},
		{"  renew_deadline: 15s\n", "f.yaml:2: election.renew_deadline: 15s: must be shorter than election.lease_duration 15s"},
		{"  renew_deadline: 2s\n", "f.yaml:2: election.renew_deadline: 2s: must be longer than 1.2 x election.retry_period 2s"},
		{"  api_server: https://kubernetes.default.svc\n", "f.yaml:2: election.api_server: \"https://kubernetes.default.svc\": only a loopback address"},
		{"  api_server: 127.0.0.1:6443\n", "f.yaml:2: election.api_server: \"127.0.0.1:6443\": not an http:// or https:// URL"},
		{"  enabled: yes\n", "f.yaml:2: election.enabled: \"yes\" is not true or false"},
		{"  lease: 1s\n", "f.yaml:2: election.lease: unknown key (known: api_server, buckets, enabled,"},
	} {
		_, err := Parse([]byte(electionFile(tt.block)), "f.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to contain %q", tt.block, err, tt.want)
		}
	}
}

// JoinConfig carries the block to package election as it is, with the
// port of the API's address for the other replicas to reach.
func TestElectionJoinConfig(t *testing.T) {
	e := DefaultElection()
	e.Enabled, e.Namespace, e.Identity, e.Buckets, e.APIServer = true, "ns", "pod-1", 4, "http://127.0.0.1:6443"
	for _, tc := range []struct{ listen, port string }{
		{"127.0.0.1:9109", "9109"},
		{":8080", "8080"},
		{"no port", ""},
	} {
		got := e.JoinConfig(tc.listen)
		want := election.JoinConfig{Namespace: "ns", Identity: "pod-1", Prefix: election.DefaultPrefix, Buckets: 4, Port: tc.port,
			Timings: election.DefaultTimings(), APIServer: "http://127.0.0.1:6443"}
		if got != want {
			t.Errorf("JoinConfig(%q) = %+v, want %+v", tc.listen, got, want)
		}
	}
}
