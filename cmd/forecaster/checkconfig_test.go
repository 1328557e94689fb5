package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
)

// serve --check-config refuses what serve refuses at start and on reload
// about the tiers (service.CheckTiers): a warm_start or a spot: block on a
// back-end that lacks the tier, naming the file, the pool and the key,
// every such pool, with exit 2; the back-ends that run the tiers pass
// with exit 0. Nothing is built: no credentials are set, and the
// volcengine stand-in the environment points at gets no call.
func TestCheckConfigRefusesTiersTheBackEndLacks(t *testing.T) {
	cloud := volcenginetest.New()
	t.Cleanup(cloud.Close)
	t.Setenv("VOLCENGINE_ACCESS_KEY", "")
	t.Setenv("VOLCENGINE_SECRET_KEY", "")
	t.Setenv("VOLCENGINE_REGION", "")
	t.Setenv("VOLCENGINE_ENDPOINT", cloud.URL)
	const k8s = "options: {api_server: \"https://127.0.0.1:6443\", namespace: gpu"
	cases := []struct {
		name  string
		pools string // pools: entries, one a line
		code  int
		want  []string // in stderr (exit 2) or stdout (exit 0)
	}{
		{"warm_start on keda", `{name: gpu, backend: keda, max: 4, rps_per_instance: 1, warm_start: 90s}`, 2,
			[]string{`pool "gpu": warm_start 1m30s needs a back-end that keeps a warm tier`, "backend keda keeps none"}},
		{"warm_start on kubescale without a placeholder", `{name: gpu, backend: kubescale, max: 4, rps_per_instance: 1, warm_start: 90s, ` + k8s + `}}`, 2,
			[]string{`pool "gpu": warm_start 1m30s`, "kubescale with options.warm_placeholder"}},
		{"spot on volcengine-ecs", `{name: ecs, backend: volcengine-ecs, max: 2, rps_per_instance: 1, spot: {share: 0.5}, options: {instance_ids: "i-a,i-b"}}`, 2,
			[]string{`pool "ecs": spot.share 0.5 needs a back-end that runs a spot mix`, "backend volcengine-ecs runs none"}},
		{"two pools, each refused", `{name: a, backend: keda, max: 4, rps_per_instance: 1, spot: {share: 1}}` + "\n  - " +
			`{name: b, backend: dryrun, max: 4, rps_per_instance: 1}` + "\n  - " +
			`{name: c, backend: keda, max: 4, rps_per_instance: 1, warm_start: 1m}`, 2,
			[]string{`: pool "a": spot.share 1 needs`, `: pool "c": warm_start 1m0s needs`}},
		{"both tiers on volcengine", `{name: gpu, backend: volcengine, max: 8, rps_per_instance: 1, warm_start: 90s, spot: {share: 0.5, base_on_demand: 2}}`, 0,
			[]string{"valid"}},
		{"a warm tier on volcengine-ecs", `{name: ecs, backend: volcengine-ecs, max: 2, rps_per_instance: 1, warm_start: 90s, options: {instance_ids: "i-a,i-b"}}`, 0,
			[]string{"valid"}},
		{"a warm tier on kubescale with a placeholder", `{name: gpu, backend: kubescale, max: 4, rps_per_instance: 1, warm_start: 90s, ` + k8s + `, warm_placeholder: gpu-warm}}`, 0,
			[]string{"valid"}},
		{"no tier on keda", `{name: gpu, backend: keda, max: 4, rps_per_instance: 1, spot: {share: 0}}`, 0, []string{"valid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "forecaster.yaml")
			if err := os.WriteFile(cfg, []byte("pools:\n  - "+tc.pools+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"serve", "--config", cfg, "--check-config"}, &stdout, &stderr)
			out := stdout.String()
			if tc.code != 0 {
				out = stderr.String()
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if tc.code != 0 && strings.Count(out, cfg+": pool ") != strings.Count(strings.Join(tc.want, "\n"), `pool "`) {
				t.Errorf("each refused pool is not named with the file:\n%s", out)
			}
		})
	}
	if n := len(cloud.Calls("")); n != 0 {
		t.Errorf("--check-config made %d calls to the cloud API, want none", n)
	}
}
