package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/poolspec"
)

func pool(name, backend string, boot time.Duration) poolspec.Pool {
	p := poolspec.DefaultPool()
	p.Name, p.Backend, p.Fleet.MaxInstances, p.Fleet.RPSPerInstance, p.Fleet.BootDelay = name, backend, 4, 1, boot
	return p
}

func TestSimulatedBootDelay(t *testing.T) {
	tests := []struct {
		name  string
		pools []poolspec.Pool
		want  time.Duration
	}{
		{"the simulated pool's boot delay", []poolspec.Pool{pool("a", "simulated", 3*time.Minute)}, 3 * time.Minute},
		{"the longest of several", []poolspec.Pool{pool("a", "simulated", 3*time.Minute), pool("b", "simulated", 7*time.Minute)}, 7 * time.Minute},
		{"other back-ends do not count", []poolspec.Pool{pool("a", "dryrun", 30*time.Minute), pool("b", "simulated", 2*time.Minute)}, 2 * time.Minute},
		{"default without a simulated pool", []poolspec.Pool{pool("a", "dryrun", time.Minute)}, 10 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SimulatedBootDelay(&poolspec.File{Pools: tt.pools}); got != tt.want {
				t.Errorf("boot delay = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("VOLCENGINE_ACCESS_KEY=fileAK\nVOLCENGINE_SECRET_KEY=fileSK\nVOLCENGINE_REGION=cn-beijing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withFile := pool("v", volcengine.Name, 0)
	withFile.Options = map[string]string{volcengine.OptCredentialsFile: creds}
	ecsPool := pool("e", volcengine.ECSName, 0)
	ecsPool.Options = map[string]string{volcengine.OptInstanceIDs: "i-a,i-b"}
	env := map[string]string{volcengine.EnvAccessKey: "envAK", volcengine.EnvSecretKey: "envSK", volcengine.EnvRegion: "cn-beijing"}
	tests := []struct {
		name  string
		pools []poolspec.Pool
		env   map[string]string
		want  []string
	}{
		{"no volcengine pool", []poolspec.Pool{pool("d", "dryrun", 0)}, env, nil},
		{"the environment's keys", []poolspec.Pool{pool("v", volcengine.Name, 0)}, env, []string{"envAK", "envSK"}},
		{"credentials that do not read add none", []poolspec.Pool{pool("v", volcengine.Name, 0)}, nil, nil},
		{"an ECS pool's keys", []poolspec.Pool{ecsPool}, env, []string{"envAK", "envSK"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Secrets(&poolspec.File{Pools: tt.pools}, func(k string) string { return tt.env[k] })
			if !slices.Equal(got, tt.want) {
				t.Errorf("Secrets = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("a pool's credentials file", func(t *testing.T) {
		got := Secrets(&poolspec.File{Pools: []poolspec.Pool{withFile}}, func(string) string { return "" })
		if !slices.Contains(got, "fileSK") {
			t.Errorf("Secrets = %q, want the file's secret key among them", got)
		}
	})
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, audit, wantErr string
	}{
		{"no audit log", "", ""},
		{"an audit log", filepath.Join(dir, "audit.log"), ""},
		{"an audit log that cannot open", filepath.Join(dir, "missing", "audit.log"), "opening the audit log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := &poolspec.File{AuditLog: tt.audit, Pools: []poolspec.Pool{pool("a", "dryrun", 0), pool("b", "dryrun", 0)}}
			s, err := New(file, Deps{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New: err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, want := s.Registry.Names(), []string{"dryrun", "keda", "kubescale", "simulated", "volcengine", "volcengine-ecs"}; !slices.Equal(got, want) {
				t.Errorf("registered %q, want %q", got, want)
			}
			first, err := s.Build(context.Background(), file.Pools[0].Actuator())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Build(context.Background(), file.Pools[1].Actuator()); err != nil {
				t.Fatal(err)
			}
			if s.Built["dryrun"] != first || len(s.Built) != 1 {
				t.Errorf("Built = %v, want the first dryrun pool's actuator only", s.Built)
			}
			if tt.audit != "" {
				if _, err := os.Stat(tt.audit); err != nil {
					t.Errorf("audit log not created: %v", err)
				}
			}
		})
	}
}

func TestBuildUnknownBackend(t *testing.T) {
	s, err := New(&poolspec.File{}, Deps{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := pool("x", "nosuch", 0)
	if _, err := s.Build(context.Background(), p.Actuator()); err == nil || len(s.Built) != 0 {
		t.Errorf("Build of an unknown back-end: err = %v, Built = %v; want an error and nothing built", err, s.Built)
	}
}

// The tiers each back-end declares (Tiers, what --check-config checks a
// pool against) are those of the back-end New's registry builds for the
// same pool (actuator.TiersOf, what serve checks), for every back-end
// Options lists; kubescale keeps a warm tier only with
// options.warm_placeholder.
func TestTiersAgreeWithTheBuiltBackEnds(t *testing.T) {
	k8s := map[string]string{"api_server": "https://127.0.0.1:6443", "namespace": "gpu", "token_file": "", "ca_file": ""}
	withPlaceholder := map[string]string{"warm_placeholder": "gpu-warm"}
	for k, v := range k8s {
		withPlaceholder[k] = v
	}
	cases := []struct {
		backend string
		options map[string]string
		max     int
		want    actuator.Tiers
	}{
		{dryrun.Name, nil, 4, actuator.Tiers{Warm: true, Spot: true}},
		{simulated.Name, nil, 4, actuator.Tiers{Warm: true, Spot: true}},
		{keda.Name, nil, 4, actuator.Tiers{}},
		{kubescale.Name, k8s, 4, actuator.Tiers{}},
		{kubescale.Name, withPlaceholder, 4, actuator.Tiers{Warm: true}},
		{volcengine.Name, nil, 4, actuator.Tiers{Warm: true, Spot: true}},
		{volcengine.Name, map[string]string{volcengine.OptScalingGroup: "scg-other"}, 4, actuator.Tiers{Warm: true, Spot: true}},
		{volcengine.ECSName, map[string]string{volcengine.OptInstanceIDs: "i-a,i-b"}, 2, actuator.Tiers{Warm: true}},
	}
	env := map[string]string{volcengine.EnvAccessKey: "AKLTtest", volcengine.EnvSecretKey: "test-secret-key", volcengine.EnvRegion: "cn-beijing"}
	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %v", tc.backend, tc.options), func(t *testing.T) {
			p := pool("p", tc.backend, time.Minute)
			p.Fleet.MaxInstances, p.Options = tc.max, tc.options
			file := &poolspec.File{Pools: []poolspec.Pool{p}}
			s, err := New(file, Deps{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			built, err := s.Build(context.Background(), p.Actuator())
			if err != nil {
				t.Fatal(err)
			}
			declared, have := Tiers(p.Actuator()), actuator.TiersOf(built)
			if declared != tc.want || have != tc.want {
				t.Errorf("declared %+v, built %T runs %+v; want both %+v", declared, built, have, tc.want)
			}
		})
		covered[tc.backend] = true
	}
	for name := range Options() {
		if !covered[name] {
			t.Errorf("back-end %s has no case: its declared tiers are not checked against its build", name)
		}
	}
}
