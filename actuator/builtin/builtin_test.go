package builtin

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
