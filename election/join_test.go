package election

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestResolveNames(t *testing.T) {
	dir := t.TempDir()
	sa := filepath.Join(dir, "namespace")
	if err := os.WriteFile(sa, []byte("from-sa\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	tests := []struct {
		name, namespace, identity string
		env                       map[string]string
		sa                        string
		wantNS, wantID, wantErr   string
	}{
		{"the config wins", "cfg-ns", "cfg-id", map[string]string{"POD_NAMESPACE": "env-ns", "POD_NAME": "env-id"}, sa, "cfg-ns", "cfg-id", ""},
		{"the environment next", "", "", map[string]string{"POD_NAMESPACE": "env-ns", "POD_NAME": "env-id"}, sa, "env-ns", "env-id", ""},
		{"the service account and the host name last", "", "", nil, sa, "from-sa", strings.ToLower(host), ""},
		{"no namespace anywhere", "", "x", nil, filepath.Join(dir, "none"), "", "", "election.namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, id, err := ResolveNames(tt.namespace, tt.identity, func(k string) string { return tt.env[k] }, tt.sa)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || ns != tt.wantNS || id != tt.wantID {
				t.Errorf("ResolveNames = %q, %q, %v; want %q, %q", ns, id, err, tt.wantNS, tt.wantID)
			}
		})
	}
}

func TestRESTConfigRate(t *testing.T) {
	tests := []struct {
		name    string
		buckets int
		retry   time.Duration
		wantQPS float32
	}{
		{"never under 20 a second", 16, 2 * time.Second, 20},
		{"1.5 times the calls of a retry period", 98, time.Second, 150},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := RESTConfig(JoinConfig{APIServer: "http://127.0.0.1:1", Buckets: tt.buckets, Timings: Timings{RetryPeriod: tt.retry}})
			if err != nil {
				t.Fatal(err)
			}
			if rc.QPS != tt.wantQPS || rc.Burst != int(2*tt.wantQPS) || rc.Host != "http://127.0.0.1:1" {
				t.Errorf("QPS %v burst %d host %s, want %v, %d, the api_server", rc.QPS, rc.Burst, rc.Host, tt.wantQPS, int(2*tt.wantQPS))
			}
		})
	}
}

func TestJoinedBucket(t *testing.T) {
	j := &Joined{identity: "r1", buckets: 16}
	if j.Identity() != "r1" || j.Bucket("pool-a") != Bucket("pool-a", 16) {
		t.Errorf("Identity %q Bucket %d, want r1 and %d", j.Identity(), j.Bucket("pool-a"), Bucket("pool-a", 16))
	}
}
