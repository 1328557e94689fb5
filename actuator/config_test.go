package actuator_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
)

func TestLoadConfigGood(t *testing.T) {
	cfg, err := actuator.LoadConfig(filepath.Join("testdata", "pools.good.yml"))
	if err != nil {
		t.Fatal(err)
	}
	want := actuator.PoolConfig{Name: "scg-sd-pool", Backend: "volcengine", Min: 1, Max: 16, MaxStep: 4,
		MinInterval: 2 * time.Minute, Options: map[string]string{"region": "cn-beijing"}}
	got, ok := cfg.Pool("scg-sd-pool")
	if !ok || got.Name != want.Name || got.Backend != want.Backend || got.Min != want.Min || got.Max != want.Max ||
		got.MaxStep != want.MaxStep || got.MinInterval != want.MinInterval || got.Options["region"] != "cn-beijing" {
		t.Errorf("pool = %+v, want %+v", got, want)
	}
	if len(cfg.Pools) != 2 {
		t.Errorf("pools = %d, want 2", len(cfg.Pools))
	}
}

func TestLoadConfigBad(t *testing.T) {
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"unknown_field.bad.yml", []string{"line 5", `unknown field "maxstep"`}},
		{"max_below_min.bad.yml", []string{"line 5", `pool "sd-pool"`, "max: must be ≥ min (4), got 2"}},
		{"negative_step.bad.yml", []string{"line 8", `pool "b"`, "max_step"}},
		{"duplicate.bad.yml", []string{`pool "a"`, "defined twice"}},
		{"bad_interval.bad.yml", []string{"line 5", "soon"}},
		{"no_backend.bad.yml", []string{"backend: is required"}},
		{"empty.bad.yml", []string{"no pools"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := actuator.LoadConfig(filepath.Join("testdata", tt.file))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("pools:\n  - name: a\n    backend: keda\n    max: 2\n"))
	f.Add([]byte("pools:\n  - {name: a, backend: x, min: 3, max: 2, min_interval: 1h}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := actuator.ParseConfig(data, "fuzz.yml")
		if err != nil {
			return
		}
		for _, p := range cfg.Pools {
			if verr := p.Validate(); verr != nil {
				t.Fatalf("accepted an invalid pool: %v", verr)
			}
		}
	})
}

func TestRegistry(t *testing.T) {
	r := actuator.NewRegistry()
	var gotCfg actuator.PoolConfig
	fake := func(ctx context.Context, cfg actuator.PoolConfig) (actuator.Actuator, error) {
		gotCfg = cfg
		return actuatortest.New("fake"), nil
	}
	failing := func(ctx context.Context, cfg actuator.PoolConfig) (actuator.Actuator, error) {
		return nil, errors.New("option region: required")
	}
	for name, f := range map[string]actuator.Factory{"fake": fake, "failing": failing} {
		if err := r.Register(name, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register("fake", fake); err == nil {
		t.Error("registering a name twice: no error")
	}
	if err := r.Register("", fake); err == nil {
		t.Error("registering an empty name: no error")
	}
	if err := r.Register("nil", nil); err == nil {
		t.Error("registering a nil factory: no error")
	}
	good := actuator.PoolConfig{Name: "p", Backend: "fake", Max: 3}
	tests := []struct {
		name    string
		backend string
		cfg     actuator.PoolConfig
		wantErr []string
		isErr   error
	}{
		{"built", "fake", good, nil, nil},
		{"unknown lists names", "volcano", good, []string{`"volcano"`, "registered: failing, fake"}, actuator.ErrUnknownBackend},
		{"invalid config", "fake", actuator.PoolConfig{Name: "p", Backend: "fake"}, []string{"max"}, actuator.ErrInvalidConfig},
		{"factory error wrapped", "failing", good, []string{"building failing actuator", "option region"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := r.New(context.Background(), tt.backend, tt.cfg)
			if len(tt.wantErr) == 0 {
				if err != nil || a == nil || gotCfg.Name != "p" {
					t.Fatalf("New = %v, %v", a, err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.isErr != nil && !errors.Is(err, tt.isErr) {
				t.Errorf("error %v is not %v", err, tt.isErr)
			}
		})
	}
}
