package volcengine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
)

func TestReleaseConfig(t *testing.T) {
	base := volcengine.Config{AccessKey: "baseAK", SecretKey: "baseSK", Region: "base-region"}
	tests := []struct {
		name                   string
		base                   volcengine.Config
		set                    volcengine.ReleaseSettings
		wantAK, wantRegion, ep string
		wantErr                string
	}{
		{"the base", base, volcengine.ReleaseSettings{}, "baseAK", "base-region", "", ""},
		{"the flags win over the base", base, volcengine.ReleaseSettings{Region: "flag-region", Endpoint: "http://127.0.0.1:1"}, "baseAK", "flag-region", "http://127.0.0.1:1", ""},
		{"nothing to connect with", volcengine.Config{}, volcengine.ReleaseSettings{}, "", "", "", "no access key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := volcengine.ReleaseConfig(tt.base, tt.set)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.AccessKey != tt.wantAK || cfg.Region != tt.wantRegion || cfg.Endpoint != tt.ep {
				t.Errorf("got key %q region %q endpoint %q, want %q, %q, %q", cfg.AccessKey, cfg.Region, cfg.Endpoint, tt.wantAK, tt.wantRegion, tt.ep)
			}
		})
	}
}

// Releases reach each pool through its own back-end: an instance of an
// ECS pool is stopped by that pool, through its region and endpoint; a
// member of a group pool's scaling group is found by asking the group
// through its pool's connection and stopped (or recycled, with
// release_mode recycle) there; an instance of no pool is not located. The
// configurations are of ECS pools only, and of both kinds. The two
// stand-ins are two regions: "east" the environment's, "west" named by
// pool options (or by --region and --volcengine-endpoint: the settings).
func TestReleasesGoThroughEachPool(t *testing.T) {
	type cloud struct{ east, west *volcenginetest.Server }
	ecs := func(name, ids string, at string) actuator.PoolConfig {
		return actuator.PoolConfig{Name: name, Backend: volcengine.ECSName, Limits: planner.Limits{MaxInstances: 1}, Options: map[string]string{
			volcengine.OptInstanceIDs: ids, "@": at}}
	}
	group := func(name, at string, opts ...string) actuator.PoolConfig {
		o := map[string]string{"@": at}
		for i := 0; i+1 < len(opts); i += 2 {
			o[opts[i]] = opts[i+1]
		}
		return actuator.PoolConfig{Name: name, Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 4}, Options: o}
	}
	cases := []struct {
		name     string
		pools    []actuator.PoolConfig
		set      func(c cloud) volcengine.ReleaseSettings
		instance string
		// wantPool is the instance's pool ("" none); wantAt the stand-in
		// that gets the release ("east", "west"), with wantAction.
		wantPool, wantAt, wantAction string
	}{
		{"ECS pools only: the second pool's instance, in its own region",
			[]actuator.PoolConfig{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, nil,
			"i-w1", "ecs-west", "west", "StopInstances"},
		{"ECS pools only: the first pool's instance",
			[]actuator.PoolConfig{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, nil,
			"i-e2", "ecs-east", "east", "StopInstances"},
		{"ECS pools only: an instance of neither",
			[]actuator.PoolConfig{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, nil,
			"i-g1", "", "", ""},
		{"mixed: the ECS pool's instance, after a group pool",
			[]actuator.PoolConfig{group("scg-gpu", "east"), ecs("ecs-west", "i-w1", "west")}, nil,
			"i-w1", "ecs-west", "west", "StopInstances"},
		{"mixed: the group's member, asked of the group's region",
			[]actuator.PoolConfig{ecs("ecs-east", "i-e1", "east"), group("scg-gpu", "west")}, nil,
			"i-g1", "scg-gpu", "west", "StopInstances"},
		{"mixed: a member of a group in recycle mode is recycled",
			[]actuator.PoolConfig{ecs("ecs-east", "i-e1", "east"), group("scg-gpu", "west", volcengine.OptReleaseMode, volcengine.ReleaseRecycle)}, nil,
			"i-g1", "scg-gpu", "west", "RemoveInstances"},
		{"the settings reach every pool: an ECS pool's options overridden",
			[]actuator.PoolConfig{ecs("ecs-west", "i-w1", "east")}, func(c cloud) volcengine.ReleaseSettings {
				return volcengine.ReleaseSettings{Region: c.west.Region, Endpoint: c.west.URL}
			},
			"i-w1", "ecs-west", "west", "StopInstances"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cloud{east: volcenginetest.New(), west: volcenginetest.New()}
			t.Cleanup(c.east.Close)
			t.Cleanup(c.west.Close)
			c.west.Region = "cn-shanghai"
			for _, srv := range []*volcenginetest.Server{c.east, c.west} {
				for _, id := range []string{"i-e1", "i-e2", "i-w1"} {
					srv.AddInstance(volcenginetest.Instance{ID: id})
				}
			}
			// The group lives in west; east knows a group of the same ID
			// without the member, so asking the wrong region misses it.
			c.west.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4, Desired: 1, ScalingMode: volcenginetest.ScalingModeRecycle, InstanceIDs: []string{"i-g1"}})
			c.east.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4})
			servers := map[string]*volcenginetest.Server{"east": c.east, "west": c.west}
			var pools []actuator.PoolConfig
			for _, p := range tc.pools {
				opts := map[string]string{}
				for k, v := range p.Options {
					if k != "@" {
						opts[k] = v
					}
				}
				if at := p.Options["@"]; at == "west" {
					opts[volcengine.OptRegion], opts[volcengine.OptEndpoint] = c.west.Region, c.west.URL
				}
				p.Options = opts
				pools = append(pools, p)
			}
			getenv := env(map[string]string{volcengine.EnvAccessKey: volcenginetest.DefaultAccessKey, volcengine.EnvSecretKey: secret,
				volcengine.EnvRegion: c.east.Region, volcengine.EnvEndpoint: c.east.URL})
			var set volcengine.ReleaseSettings
			if tc.set != nil {
				set = tc.set(c)
			}
			ctx := context.Background()
			rel, keys, err := volcengine.BuildReleases(ctx, pools, set, getenv, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 2*len(pools) || keys[1] != secret {
				t.Errorf("keys %d, want each pool's access and secret key", len(keys))
			}
			pool, err := rel.Locate(ctx, tc.instance)
			if err != nil || pool != tc.wantPool {
				t.Fatalf("Locate(%s) = %q, %v; want %q", tc.instance, pool, err, tc.wantPool)
			}
			if pool == "" {
				if _, err := rel.PoolOf(ctx, tc.instance, "forecaster.yaml"); err == nil || !strings.Contains(err.Error(), "not in a volcengine pool of forecaster.yaml") {
					t.Errorf("PoolOf = %v, want the refusal naming the configuration", err)
				}
				return
			}
			if err := rel.For(pool).Release(ctx, tc.instance, "idle"); err != nil {
				t.Fatal(err)
			}
			for at, srv := range servers {
				n := 0
				for _, call := range srv.Calls(tc.wantAction) {
					if call.Params.Get("InstanceIds.1") == tc.instance && call.SignatureErr == nil && call.Region == srv.Region {
						n++
					}
				}
				if want := map[bool]int{true: 1, false: 0}[at == tc.wantAt]; n != want {
					t.Errorf("%s got %d %s calls for %s, want %d", at, n, tc.wantAction, tc.instance, want)
				}
			}
		})
	}
}

// A release path's pools must each have a back-end of their kind: a
// missing one, or one of another kind, is an error naming the pool.
func TestNewReleasesChecksTheBackEnds(t *testing.T) {
	ecsPool := actuator.PoolConfig{Name: "ecs", Backend: volcengine.ECSName, Options: map[string]string{volcengine.OptInstanceIDs: "i-1"}}
	groupPool := actuator.PoolConfig{Name: "gpu", Backend: volcengine.Name}
	f := newFixture(t, volcengine.Options{})
	cases := []struct {
		name    string
		pool    actuator.PoolConfig
		backend actuator.Actuator
		wantErr string
	}{
		{"an ECS pool without its back-end", ecsPool, nil, `pool "ecs": its volcengine-ecs back-end is <nil>`},
		{"an ECS pool on a group's back-end", ecsPool, f.act, `pool "ecs": its volcengine-ecs back-end is *volcengine.Actuator`},
		{"a group pool without its back-end", groupPool, nil, `pool "gpu": its volcengine back-end is <nil>`},
		{"a group pool on its Actuator", groupPool, f.act, ""},
		{"another back-end's pool is left out", actuator.PoolConfig{Name: "d", Backend: "dryrun"}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel, err := volcengine.NewReleases([]actuator.PoolConfig{tc.pool}, func(string) actuator.Actuator { return tc.backend })
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.wantErr == "" && (rel.For(tc.pool.Name) != nil) != (tc.backend != nil):
				t.Errorf("For(%s) = %v, want a back-end: %v", tc.pool.Name, rel.For(tc.pool.Name), tc.backend != nil)
			}
		})
	}
}

// A pool that cannot connect stops the building, naming the pool; the
// pool's options are not changed by the settings.
func TestBuildReleasesRefusesAPoolThatCannotConnect(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "creds")
	if err := os.WriteFile(creds, []byte("VOLCENGINE_ACCESS_KEY=fileAK\nVOLCENGINE_SECRET_KEY=fileSK00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{volcengine.OptInstanceIDs: "i-1"}
	pools := []actuator.PoolConfig{{Name: "ecs", Backend: volcengine.ECSName, Options: opts}}
	_, _, err := volcengine.BuildReleases(context.Background(), pools, volcengine.ReleaseSettings{Credentials: creds}, env(nil), nil)
	if err == nil || !strings.Contains(err.Error(), `pool "ecs"`) || !strings.Contains(err.Error(), "no region") {
		t.Errorf("err = %v, want the pool's missing region", err)
	}
	if _, _, err := volcengine.BuildReleases(context.Background(), pools, volcengine.ReleaseSettings{Credentials: creds, Region: "r"}, env(nil), nil); err != nil {
		t.Errorf("with --region: %v", err)
	}
	if len(opts) != 1 {
		t.Errorf("the pool's options changed: %v", opts)
	}
	if _, _, err := volcengine.BuildReleases(context.Background(), pools, volcengine.ReleaseSettings{Credentials: filepath.Join(t.TempDir(), "none")}, env(nil), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an unreadable credentials file: %v, want it reported", err)
	}
}
