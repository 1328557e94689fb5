package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
)

// releaseEnv points the process environment at a fresh loopback fake.
func releaseEnv(t *testing.T) *volcenginetest.Server {
	t.Helper()
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	t.Setenv("VOLCENGINE_ACCESS_KEY", volcenginetest.DefaultAccessKey)
	t.Setenv("VOLCENGINE_SECRET_KEY", volcenginetest.DefaultSecretKey)
	t.Setenv("VOLCENGINE_REGION", volcenginetest.DefaultRegion)
	t.Setenv("VOLCENGINE_ENDPOINT", srv.URL)
	return srv
}

func runReleaseCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"release"}, args...), &out, &errb)
	for _, s := range []string{out.String(), errb.String()} {
		if strings.Contains(s, volcenginetest.DefaultSecretKey) {
			t.Errorf("the secret key was printed:\n%s", s)
		}
	}
	return code, out.String(), errb.String()
}

var releaseAuthRE = regexp.MustCompile(`^HMAC-SHA256 Credential=` + volcenginetest.DefaultAccessKey +
	`/\d{8}/cn-beijing/ecs/request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$`)

// TestReleaseCommand is the release command end to end:
// VOLCENGINE_ENDPOINT=http://127.0.0.1:PORT forecaster release --instance
// i-abc --provider volcengine sends StopInstances for i-abc with
// StoppedMode=StopCharging and a valid Authorization header, and exits
// non-zero with the server's message when it answers with an error.
func TestReleaseCommand(t *testing.T) {
	srv := releaseEnv(t)
	srv.AddInstance(volcenginetest.Instance{ID: "i-abc"})

	code, stdout, stderr := runReleaseCLI(t, "--instance", "i-abc", "--provider", "volcengine", "--reason", "job 42 finished")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	calls := srv.Calls("StopInstances")
	if len(calls) != 1 {
		t.Fatalf("%d StopInstances calls, want 1", len(calls))
	}
	c := calls[0]
	if c.Params.Get("Action") != "StopInstances" || c.Params.Get("Version") != "2020-04-01" ||
		c.Params.Get("InstanceIds.1") != "i-abc" || c.Params.Get("StoppedMode") != "StopCharging" || c.Params.Get("ClientToken") == "" {
		t.Errorf("StopInstances parameters = %v", c.Params)
	}
	if c.SignatureErr != nil || !releaseAuthRE.MatchString(c.Authorization) {
		t.Errorf("Authorization %q: %v", c.Authorization, c.SignatureErr)
	}
	if !strings.Contains(stdout, "released i-abc") || !strings.Contains(stdout, "StopCharging") || !strings.Contains(stdout, "RequestId 20261130FAKE") {
		t.Errorf("stdout = %q", stdout)
	}

	// The server answers with an error envelope: exit 1 with its message.
	srv.Fail("StopInstances", volcenginetest.Reply{Status: 400, Code: "InvalidInstanceStatus",
		Message: "The status of the specified instance does not support this request."})
	code, _, stderr = runReleaseCLI(t, "--instance", "i-abc", "--provider", "volcengine")
	if code != 1 || !strings.Contains(stderr, "InvalidInstanceStatus: The status of the specified instance does not support this request.") ||
		!strings.Contains(stderr, "RequestId") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestReleaseCommandFallbackAndConfig(t *testing.T) {
	srv := releaseEnv(t)
	srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4, InstanceIDs: []string{"i-member"}})
	srv.AddInstance(volcenginetest.Instance{ID: "i-local", RefusesStopCharging: true})
	srv.AddInstance(volcenginetest.Instance{ID: "i-stranger"})

	code, stdout, stderr := runReleaseCLI(t, "--instance", "i-local")
	if code != 0 || !strings.Contains(stdout, "KeepCharging") || !strings.Contains(stderr, "falling back to KeepCharging") {
		t.Errorf("fallback: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	cfg := filepath.Join(t.TempDir(), "pools.yaml")
	os.WriteFile(cfg, []byte("pools:\n  - name: scg-gpu\n    backend: volcengine\n    max: 4\n    rps_per_instance: 2\n"+
		"  - name: other\n    backend: dryrun\n    max: 4\n    rps_per_instance: 2\n"), 0o600)
	code, _, stderr = runReleaseCLI(t, "--instance", "i-stranger", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, "not in a volcengine pool") {
		t.Errorf("stranger: exit %d, stderr: %s", code, stderr)
	}
	if n := len(srv.Calls("StopInstances")); n != 2 {
		t.Errorf("%d StopInstances calls, want 2 (the stranger was not stopped)", n)
	}
	if code, _, stderr = runReleaseCLI(t, "--instance", "i-member", "--config", cfg); code != 0 {
		t.Errorf("member: exit %d, stderr: %s", code, stderr)
	}
	// --region supplies what neither the environment nor the pool has.
	t.Setenv("VOLCENGINE_REGION", "")
	if code, _, stderr = runReleaseCLI(t, "--instance", "i-member", "--config", cfg); code != 1 || !strings.Contains(stderr, "no region") {
		t.Errorf("no region anywhere: exit %d, stderr: %s", code, stderr)
	}
	if code, _, stderr = runReleaseCLI(t, "--instance", "i-member", "--config", cfg, "--region", volcenginetest.DefaultRegion); code != 0 {
		t.Errorf("--region with --config: exit %d, stderr: %s", code, stderr)
	}
	t.Setenv("VOLCENGINE_REGION", volcenginetest.DefaultRegion)
	if code, _, stderr = runReleaseCLI(t, "--instance", "i-member", "--config", cfg, "--pool", "scg-gpu"); code != 0 {
		t.Errorf("--pool scg-gpu: exit %d, stderr: %s", code, stderr)
	}
	for _, tc := range []struct{ pool, want string }{
		{"other", "--pool other: its back-end is dryrun"},
		{"nope", `no pool "nope" in the configuration (pools: scg-gpu, other)`},
	} {
		if code, _, stderr = runReleaseCLI(t, "--instance", "i-member", "--config", cfg, "--pool", tc.pool); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--pool %s: exit %d, stderr: %s", tc.pool, code, stderr)
		}
	}
}

// The service's own configuration is release's: the documented example
// parses (publish_schedule and every other pool key included), and an
// instance outside its volcengine pools is refused, not a parse error.
func TestReleaseReadsTheServiceConfig(t *testing.T) {
	releaseEnv(t)
	code, _, stderr := runReleaseCLI(t, "--instance", "i-stranger", "--config", filepath.Join("..", "..", "docs", "forecaster.yaml"))
	if code != 1 || !strings.Contains(stderr, "not in a volcengine pool") {
		t.Errorf("exit %d, stderr: %s", code, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("pools:\n  - {name: g, backend: volcengine, max: 4, rps_per_instance: 1, options: {regoin: x}}\n"), 0o600)
	code, _, stderr = runReleaseCLI(t, "--instance", "i-a", "--config", bad)
	if code != 2 || !strings.Contains(stderr, "bad.yaml:2: pools[0].options.regoin: unknown option of back-end volcengine") {
		t.Errorf("bad option: exit %d, stderr: %s", code, stderr)
	}
}

func TestReleaseCommandUsage(t *testing.T) {
	releaseEnv(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no instance", nil, 2, "--instance is required"},
		{"unknown provider", []string{"--instance", "i-a", "--provider", "aws"}, 2, `"aws" is not supported`},
		{"stray argument", []string{"--instance", "i-a", "now"}, 2, "unexpected argument"},
		{"help", []string{"--help"}, 0, "StopCharging"},
		{"bad endpoint", []string{"--instance", "i-a", "--volcengine-endpoint", "ftp://x"}, 1, "not a host or an http(s) URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runReleaseCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d with %q", code, stderr, tc.code, tc.want)
			}
		})
	}

	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("VOLCENGINE_SECRET_KEY", "")
		code, _, stderr := runReleaseCLI(t, "--instance", "i-a")
		if code != 1 || !strings.Contains(stderr, "VOLCENGINE_SECRET_KEY") {
			t.Errorf("exit %d, stderr: %s", code, stderr)
		}
	})
}

func TestReleaseCommandCredentialsFile(t *testing.T) {
	srv := releaseEnv(t)
	srv.AddInstance(volcenginetest.Instance{ID: "i-abc"})
	t.Setenv("VOLCENGINE_ACCESS_KEY", "")
	t.Setenv("VOLCENGINE_SECRET_KEY", "")
	t.Setenv("VOLCENGINE_ENDPOINT", "")
	creds := filepath.Join(t.TempDir(), "volcengine.json")
	os.WriteFile(creds, []byte(`{"access_key":"`+volcenginetest.DefaultAccessKey+`","secret_key":"`+volcenginetest.DefaultSecretKey+`"}`), 0o600)

	code, _, stderr := runReleaseCLI(t, "--instance", "i-abc", "--credentials", creds, "--volcengine-endpoint", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr)
	}
	if c := srv.Calls("StopInstances"); len(c) != 1 || c[0].SignatureErr != nil {
		t.Errorf("StopInstances calls = %+v", c)
	}
}

// A pool with release_mode recycle: 'forecaster release --config' recycles
// a member of its group in it (RemoveInstances, RemoveMode=recycle) and
// says so, instead of stopping it with StopInstances.
func TestReleaseRecyclesAMember(t *testing.T) {
	srv := releaseEnv(t)
	srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 1, Max: 4, Desired: 2, InstanceIDs: []string{"i-m1", "i-m2"}})
	cfg := filepath.Join(t.TempDir(), "pools.yaml")
	os.WriteFile(cfg, []byte("pools:\n  - name: scg-gpu\n    backend: volcengine\n    max: 4\n    rps_per_instance: 2\n"+
		"    options:\n      release_mode: recycle\n"), 0o600)
	code, stdout, stderr := runReleaseCLI(t, "--instance", "i-m2", "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "released i-m2: instance i-m2 recycled in scaling group scg-gpu") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	calls := srv.Calls("RemoveInstances")
	if len(calls) != 1 || calls[0].Params.Get("RemoveMode") != "recycle" || len(srv.Calls("StopInstances")) != 0 {
		t.Errorf("%d RemoveInstances calls (%v), %d StopInstances; want one recycle and no stop", len(calls), calls, len(srv.Calls("StopInstances")))
	}
	if g, _ := srv.Group("scg-gpu"); g.Desired != 1 {
		t.Errorf("the group asks for %d, want 1 after recycling a member", g.Desired)
	}
}

// 'forecaster release --config' releases an instance through its own
// pool's back-end and connection: in a configuration of ECS pools only
// and in one of both kinds, an ECS pool's instance is stopped by that
// pool in its region (the second pool's options name another region and
// endpoint than the environment's), a group's member where the group is,
// and an instance of no pool, or of another pool than --pool, is refused.
func TestReleaseCommandReleasesThroughEachPool(t *testing.T) {
	east := releaseEnv(t)
	west := volcenginetest.New()
	t.Cleanup(west.Close)
	west.Region = "cn-shanghai"
	for _, srv := range []*volcenginetest.Server{east, west} {
		for _, id := range []string{"i-e1", "i-e2", "i-w1", "i-stranger"} {
			srv.AddInstance(volcenginetest.Instance{ID: id})
		}
	}
	east.AddGroup(volcenginetest.Group{ID: "scg-gpu", Max: 4, Desired: 1, InstanceIDs: []string{"i-g1"}})
	const ecsEast = "  - {name: ecs-east, backend: volcengine-ecs, max: 2, rps_per_instance: 1, options: {instance_ids: \"i-e1,i-e2\"}}\n"
	ecsWest := fmt.Sprintf("  - {name: ecs-west, backend: volcengine-ecs, max: 1, rps_per_instance: 1, options: {instance_ids: i-w1, region: %s, endpoint: %q}}\n",
		west.Region, west.URL)
	const group = "  - {name: scg-gpu, backend: volcengine, max: 4, rps_per_instance: 1}\n"
	cases := []struct {
		name, pools, instance string
		args                  []string
		// wantAt is the stand-in that stops the instance (nil: refused,
		// exit 1 with wantErr).
		wantAt  *volcenginetest.Server
		wantErr string
	}{
		{"ECS pools only: the second pool's instance", ecsEast + ecsWest, "i-w1", nil, west, ""},
		{"ECS pools only: the first pool's instance", ecsEast + ecsWest, "i-e2", nil, east, ""},
		{"ECS pools only: an instance of neither", ecsEast + ecsWest, "i-stranger", nil, nil, "not in a volcengine pool"},
		{"ECS pools only: --pool names the other pool", ecsEast + ecsWest, "i-e1", []string{"--pool", "ecs-west"}, nil, "not in a volcengine pool"},
		{"mixed: the ECS pool's instance", group + ecsWest, "i-w1", nil, west, ""},
		{"mixed: the group's member", ecsWest + group, "i-g1", nil, east, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "pools.yaml")
			if err := os.WriteFile(cfg, []byte("pools:\n"+tc.pools), 0o600); err != nil {
				t.Fatal(err)
			}
			stops := func(srv *volcenginetest.Server) int {
				n := 0
				for _, c := range srv.Calls("StopInstances") {
					if c.Params.Get("InstanceIds.1") == tc.instance && c.SignatureErr == nil && c.Region == srv.Region {
						n++
					}
				}
				return n
			}
			before := map[*volcenginetest.Server]int{east: stops(east), west: stops(west)}
			code, stdout, stderr := runReleaseCLI(t, append([]string{"--instance", tc.instance, "--config", cfg}, tc.args...)...)
			switch {
			case tc.wantAt == nil && (code != 1 || !strings.Contains(stderr, tc.wantErr)):
				t.Errorf("exit %d, stderr: %s; want 1 with %q", code, stderr, tc.wantErr)
			case tc.wantAt != nil && (code != 0 || !strings.Contains(stdout, "released "+tc.instance)):
				t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			for _, srv := range []*volcenginetest.Server{east, west} {
				if got, want := stops(srv)-before[srv], map[bool]int{true: 1}[srv == tc.wantAt]; got != want {
					t.Errorf("the stand-in of region %s got %d StopInstances for %s, want %d", srv.Region, got, tc.instance, want)
				}
			}
		})
	}
}
