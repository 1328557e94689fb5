package actuator_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/actuatortest"
	"github.com/prewarm/prewarm/planner"
)

func TestRegistry(t *testing.T) {
	r := actuator.NewRegistry()
	var gotCfg actuator.PoolConfig
	fake := func(ctx context.Context, cfg actuator.PoolConfig, _ actuator.OptionValues) (actuator.Actuator, error) {
		gotCfg = cfg
		return actuatortest.New("fake"), nil
	}
	failing := func(ctx context.Context, cfg actuator.PoolConfig, _ actuator.OptionValues) (actuator.Actuator, error) {
		return nil, errors.New("option region: required")
	}
	options := actuator.OptionSet{
		{Name: "region", Kind: actuator.KindString, Help: "the region"},
		{Name: "endpoint", Kind: actuator.KindURL, Help: "the endpoint"},
	}
	if err := r.Register("fake", fake, options); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("failing", failing, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("fake", fake, nil); err == nil {
		t.Error("registering a name twice: no error")
	}
	if err := r.Register("", fake, nil); err == nil {
		t.Error("registering an empty name: no error")
	}
	if err := r.Register("nil", nil, nil); err == nil {
		t.Error("registering a nil factory: no error")
	}
	if err := r.Register("secret", fake, actuator.OptionSet{{Name: "secret_key", Kind: actuator.KindString, Help: "x"}}); err == nil {
		t.Error("registering an option naming a secret: no error")
	}
	good := actuator.PoolConfig{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 3}}
	tests := []struct {
		name    string
		backend string
		cfg     actuator.PoolConfig
		wantErr []string
		isErr   error
	}{
		{"built", "fake", good, nil, nil},
		{"declared option", "fake", actuator.PoolConfig{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 3}, Options: map[string]string{"region": "x"}}, nil, nil},
		{"undeclared option is a typo", "fake", actuator.PoolConfig{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 3}, Options: map[string]string{"regoin": "x"}},
			[]string{"options.regoin", "unknown option of back-end fake (known: endpoint, region)"}, actuator.ErrInvalidConfig},
		{"every bad option named", "fake", actuator.PoolConfig{Name: "p", Backend: "fake", Limits: planner.Limits{MaxInstances: 3}, Options: map[string]string{"endpoint": "ftp://x", "regoin": "x"}},
			[]string{"options.endpoint: \"ftp://x\" is not an http(s) URL", "options.regoin: unknown option"}, actuator.ErrInvalidConfig},
		{"a back-end without options takes none", "failing", actuator.PoolConfig{Name: "p", Backend: "failing", Limits: planner.Limits{MaxInstances: 3}, Options: map[string]string{"x": "1"}},
			[]string{"options.x", "(known: none)"}, actuator.ErrInvalidConfig},
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
