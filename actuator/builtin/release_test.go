package builtin

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/poolspec"
)

func TestReleasePools(t *testing.T) {
	file := &poolspec.File{Pools: []poolspec.Pool{pool("gpu", volcengine.Name, 0), pool("dry", "dryrun", 0), pool("gpu2", volcengine.Name, 0),
		pool("ecs", volcengine.ECSName, 0)}}
	tests := []struct {
		name, pool string
		want       []string
		wantErr    string
	}{
		{"every pool without --pool", "", []string{"gpu", "dry", "gpu2", "ecs"}, ""},
		{"one volcengine pool", "gpu2", []string{"gpu2"}, ""},
		{"one pool of ECS instances", "ecs", []string{"ecs"}, ""},
		{"a pool of another back-end is refused", "dry", nil, "--pool dry: its back-end is dryrun"},
		{"a pool not configured is refused", "nope", nil, "--pool:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pools, err := ReleasePools(file, tt.pool)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range pools {
				names = append(names, p.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.want, ",") {
				t.Errorf("pools %v, want %v", names, tt.want)
			}
		})
	}
}

// The release hook releases each instance through its own pool's
// back-end: in a configuration of ECS pools only, and in one of ECS
// pools, a scaling group's pool and a dry-run pool, an instance is
// located in its pool (an ECS pool's instance_ids; a group asked through
// its own pool's connection) and stopped by that pool's back-end, in the
// pool's region; an instance of no pool is refused and stopped nowhere.
// The stand-ins are two regions: "east" the environment's, "west" named
// by the pools' options.
func TestReleaseHookReleasesThroughEachPool(t *testing.T) {
	type at = string
	ecs := func(name, ids string, where at) poolspec.Pool {
		p := pool(name, volcengine.ECSName, 0)
		p.Fleet.MaxInstances = len(strings.Split(ids, ","))
		p.Options = map[string]string{volcengine.OptInstanceIDs: ids, "@": where}
		return p
	}
	group := func(name string, where at) poolspec.Pool {
		p := pool(name, volcengine.Name, 0)
		p.Options = map[string]string{"@": where}
		return p
	}
	cases := []struct {
		name     string
		pools    []poolspec.Pool
		instance string
		// wantPool is the reply's pool ("" refused), wantAt the stand-in
		// that stops the instance.
		wantPool string
		wantAt   at
	}{
		{"ECS pools only: the second pool's instance", []poolspec.Pool{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, "i-w1", "ecs-west", "west"},
		{"ECS pools only: the first pool's instance", []poolspec.Pool{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, "i-e2", "ecs-east", "east"},
		{"ECS pools only: an instance of neither", []poolspec.Pool{ecs("ecs-east", "i-e1,i-e2", "east"), ecs("ecs-west", "i-w1", "west")}, "i-g1", "", ""},
		{"mixed: the group's member", []poolspec.Pool{pool("dry", "dryrun", 0), ecs("ecs-east", "i-e1", "east"), group("scg-gpu", "west")}, "i-g1", "scg-gpu", "west"},
		{"mixed: the ECS pool's instance", []poolspec.Pool{pool("dry", "dryrun", 0), group("scg-gpu", "west"), ecs("ecs-east", "i-e1", "east")}, "i-e1", "ecs-east", "east"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			servers := map[at]*volcenginetest.Server{"east": volcenginetest.New(), "west": volcenginetest.New()}
			servers["west"].Region = "cn-shanghai"
			for _, srv := range servers {
				t.Cleanup(srv.Close)
				for _, id := range []string{"i-e1", "i-e2", "i-w1", "i-g1"} {
					srv.AddInstance(volcenginetest.Instance{ID: id})
				}
			}
			servers["west"].AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4, Desired: 1, InstanceIDs: []string{"i-g1"}})
			servers["east"].AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4})
			file := &poolspec.File{}
			for _, p := range tc.pools {
				if where := p.Options["@"]; where != "" {
					delete(p.Options, "@")
					if where == "west" {
						p.Options[volcengine.OptRegion], p.Options[volcengine.OptEndpoint] = servers["west"].Region, servers["west"].URL
					}
				}
				file.Pools = append(file.Pools, p)
			}
			env := map[string]string{volcengine.EnvAccessKey: volcenginetest.DefaultAccessKey, volcengine.EnvSecretKey: volcenginetest.DefaultSecretKey,
				volcengine.EnvRegion: servers["east"].Region, volcengine.EnvEndpoint: servers["east"].URL}
			log := slog.New(slog.DiscardHandler)
			s, err := New(file, Deps{Registerer: prometheus.NewRegistry(), Logger: log, Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, p := range file.Pools {
				if _, err := s.Build(context.Background(), p.Actuator()); err != nil {
					t.Fatal(err)
				}
			}
			h, err := s.ReleaseHook(file, releasehook.Config{Token: "t0ken-of-the-test", Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, releasehook.Path, strings.NewReader(`{"instance_id":"`+tc.instance+`"}`))
			r.Header.Set("Authorization", "Bearer t0ken-of-the-test")
			r.Host, r.RemoteAddr = "127.0.0.1", "127.0.0.1:40000"
			h.ServeHTTP(w, r)
			var rep releasehook.Reply
			json.Unmarshal(w.Body.Bytes(), &rep)
			switch {
			case tc.wantPool == "" && (w.Code != http.StatusForbidden || rep.Outcome != "refused"):
				t.Errorf("%d %+v, want 403 refused", w.Code, rep)
			case tc.wantPool != "" && (w.Code != http.StatusOK || rep.Outcome != "released" || rep.Pool != tc.wantPool):
				t.Errorf("%d %+v, want 200 released in pool %s", w.Code, rep, tc.wantPool)
			}
			for where, cloud := range servers {
				n := 0
				for _, c := range cloud.Calls("StopInstances") {
					if c.Params.Get("InstanceIds.1") == tc.instance && c.SignatureErr == nil {
						n++
					}
				}
				if want := map[bool]int{true: 1}[where == tc.wantAt]; n != want {
					t.Errorf("%s got %d StopInstances for %s, want %d", where, n, tc.instance, want)
				}
			}
		})
	}
}
