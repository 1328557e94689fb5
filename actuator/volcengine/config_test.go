package volcengine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/actuator/volcengine/volcenginetest"
	"github.com/prewarm/prewarm/planner"
	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	sdk "github.com/volcengine/volcengine-go-sdk/volcengine"
	"github.com/volcengine/volcengine-go-sdk/volcengine/credentials"
	"github.com/volcengine/volcengine-go-sdk/volcengine/session"
)

const secret = volcenginetest.DefaultSecretKey

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	kv := writeFile(t, "creds.env", "# prewarm credentials\n\nexport VOLCENGINE_ACCESS_KEY=AKfile\nsecret_key = \""+secret+"\"\nregion=cn-shanghai\n")
	js := writeFile(t, "creds.json", `{"access_key":"AKjson","secret_key":"`+secret+`","region":"cn-guangzhou","endpoint":"http://127.0.0.1:9"}`)
	cases := []struct {
		name    string
		path    string
		env     map[string]string
		want    volcengine.Config
		wantErr string
	}{
		{name: "environment only", env: map[string]string{"VOLCENGINE_ACCESS_KEY": "AKenv", "VOLCENGINE_SECRET_KEY": secret, "VOLCENGINE_REGION": "cn-beijing", "VOLCENGINE_ENDPOINT": "http://127.0.0.1:8080"},
			want: volcengine.Config{AccessKey: "AKenv", SecretKey: secret, Region: "cn-beijing", Endpoint: "http://127.0.0.1:8080"}},
		{name: "KEY=VALUE file", path: kv, want: volcengine.Config{AccessKey: "AKfile", SecretKey: secret, Region: "cn-shanghai"}},
		{name: "JSON file", path: js, want: volcengine.Config{AccessKey: "AKjson", SecretKey: secret, Region: "cn-guangzhou", Endpoint: "http://127.0.0.1:9"}},
		{name: "environment wins over the file", path: kv, env: map[string]string{"VOLCENGINE_REGION": "cn-beijing"},
			want: volcengine.Config{AccessKey: "AKfile", SecretKey: secret, Region: "cn-beijing"}},
		{name: "missing file", path: filepath.Join(t.TempDir(), "nope"), wantErr: "reading credentials file"},
		{name: "unknown key names the line", path: writeFile(t, "bad.env", "region=x\nVOLCENGINE_SECRET="+secret+"\n"), wantErr: "bad.env:2: unknown key \"VOLCENGINE_SECRET\""},
		// A base64 secret pasted on a line of its own splits at its
		// padding: the "key" is the secret and must not be echoed.
		{name: "bare secret line", path: writeFile(t, "bare.env", "region=x\n"+secret+"==\n"), wantErr: "bare.env:2: unknown key (not shown"},
		{name: "bare secret JSON key", path: writeFile(t, "bare.json", `{"`+secret+`==":"x"}`), wantErr: "unknown key (not shown"},
		{name: "no equals sign", path: writeFile(t, "bad2.env", secret+"\n"), wantErr: "bad2.env:1: expected KEY=VALUE"},
		{name: "broken JSON", path: writeFile(t, "bad.json", `{"secret_key":"`+secret+`",`), wantErr: "invalid JSON at byte"},
		{name: "JSON with a number", path: writeFile(t, "bad2.json", `{"secret_key":"`+secret+`","region":1}`), wantErr: "object of strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := volcengine.LoadConfig(tc.path, env(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	ok := volcengine.Config{AccessKey: "AK", SecretKey: secret, Region: "cn-beijing"}
	cases := []struct {
		name    string
		mutate  func(*volcengine.Config)
		wantErr string
	}{
		{"complete", func(*volcengine.Config) {}, ""},
		{"no access key", func(c *volcengine.Config) { c.AccessKey = "" }, "VOLCENGINE_ACCESS_KEY"},
		{"no secret", func(c *volcengine.Config) { c.SecretKey = "" }, "VOLCENGINE_SECRET_KEY"},
		{"no region", func(c *volcengine.Config) { c.Region = "" }, "VOLCENGINE_REGION"},
		{"bad scheme", func(c *volcengine.Config) { c.Endpoint = "ftp://x" }, "not a host or an http(s) URL"},
		{"credentials in the endpoint", func(c *volcengine.Config) { c.Endpoint = "http://AK:" + secret + "@127.0.0.1" }, "must not carry credentials"},
		// No host after the '@': still refused for its credentials, so
		// the endpoint, secret included, is never quoted in a "not a
		// host" error.
		{"credentials, no host", func(c *volcengine.Config) { c.Endpoint = "http://AK:" + secret + "@" }, "must not carry credentials"},
		{"credentials, bad port", func(c *volcengine.Config) { c.Endpoint = "AK:" + secret + "@host:port" }, "must not carry credentials"},
		{"host only", func(c *volcengine.Config) { c.Endpoint = "open.volcengineapi.com" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes the secret: %v", err)
			}
		})
	}
}

// TestSecretNeverPrints formats a Config every way a log line or error
// might.
func TestSecretNeverPrints(t *testing.T) {
	cfg := volcengine.Config{AccessKey: "AK", SecretKey: secret, Region: "cn-beijing"}
	var out bytes.Buffer
	fmt.Fprintf(&out, "%v %+v %#v %s %v", cfg, cfg, cfg, cfg.SecretKey, &cfg)
	j, _ := json.Marshal(cfg)
	out.Write(j)
	slog.New(slog.NewJSONHandler(&out, nil)).Info("cfg", "cfg", cfg, "secret", cfg.SecretKey)
	slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "cfg", cfg, "secret", cfg.SecretKey)
	if strings.Contains(out.String(), secret) {
		t.Fatalf("the secret printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "[REDACTED]") {
		t.Errorf("no redaction marker in:\n%s", out.String())
	}
	if cfg.SecretKey.Reveal() != secret {
		t.Error("Reveal lost the value")
	}
}

func TestFactory(t *testing.T) {
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	srv.AddGroup(volcenginetest.Group{ID: "scg-real-id", Min: 1, Max: 4, Desired: 2, InstanceIDs: []string{"i-1", "i-2"}})
	getenv := env(map[string]string{
		"VOLCENGINE_ACCESS_KEY": volcenginetest.DefaultAccessKey,
		"VOLCENGINE_SECRET_KEY": secret,
		"VOLCENGINE_REGION":     "elsewhere",
	})
	reg := actuator.NewRegistry()
	if err := reg.Register(volcengine.Name, volcengine.NewFactory(getenv, nil), volcengine.PoolOptions); err != nil {
		t.Fatal(err)
	}
	pool := actuator.PoolConfig{Name: "gpu-a100", Backend: "volcengine", Limits: planner.Limits{MinInstances: 0, MaxInstances: 4}, Options: map[string]string{
		"region": volcenginetest.DefaultRegion, "endpoint": srv.URL, "scaling_group": "scg-real-id", "timeout": "3s",
	}}
	a, err := reg.New(context.Background(), volcengine.Name, pool)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.Capacity(context.Background(), "gpu-a100")
	if err != nil || c.Desired != 2 || c.Max != 4 {
		t.Errorf("Capacity through the pool name = %+v, %v", c, err)
	}
	if err := a.SetDesired(context.Background(), "gpu-a100", 3, "t"); err != nil {
		t.Fatal(err)
	}
	if g, _ := srv.Group("scg-real-id"); g.Desired != 3 {
		t.Errorf("desired = %d, want 3", g.Desired)
	}

	pool.Options["colour"] = "blue"
	if _, err := reg.New(context.Background(), volcengine.Name, pool); err == nil || !strings.Contains(err.Error(), "options.colour: unknown option") {
		t.Errorf("unknown option: err = %v", err)
	}
	delete(pool.Options, "colour")
	pool.Options["timeout"] = "soon"
	if _, err := reg.New(context.Background(), volcengine.Name, pool); err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("bad timeout: err = %v", err)
	}
}

func TestPoolOfInstance(t *testing.T) {
	f := newFixture(t, volcengine.Options{})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-gpu", Min: 0, Max: 4, InstanceIDs: []string{"i-member"}})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-batch", Min: 0, Max: 4, InstanceIDs: []string{"i-batch"}})
	f.srv.AddGroup(volcenginetest.Group{ID: "scg-other", Min: 0, Max: 4, InstanceIDs: []string{"i-outsider"}})
	locate := volcengine.PoolOfInstance(f.act, []actuator.PoolConfig{
		{Name: "scg-gpu", Backend: "volcengine", Limits: planner.Limits{MaxInstances: 4}, Options: map[string]string{"instances": "i-listed, i-also"}},
		{Name: "batch", Backend: "volcengine", Limits: planner.Limits{MaxInstances: 4}, Options: map[string]string{"scaling_group": "scg-batch"}},
		{Name: "scg-other", Backend: "keda", Limits: planner.Limits{MaxInstances: 4}}, // not ours: ignored
		{Name: "ecs-gpu", Backend: volcengine.ECSName, Limits: planner.Limits{MaxInstances: 2}, Options: map[string]string{"instance_ids": "i-ecs1,i-ecs2"}},
	})
	for id, want := range map[string]string{"i-member": "scg-gpu", "i-listed": "scg-gpu", "i-also": "scg-gpu",
		"i-batch": "batch", "i-outsider": "", "i-nobody": "", "i-ecs1": "ecs-gpu", "i-ecs2": "ecs-gpu"} {
		got, err := locate(context.Background(), id)
		if err != nil || got != want {
			t.Errorf("pool of %s = %q, %v; want %q", id, got, err, want)
		}
	}
	f.srv.Fail("DescribeScalingInstances", volcenginetest.Internal)
	if _, err := locate(context.Background(), "i-x"); err == nil {
		t.Error("a failing membership check located the instance silently")
	}
}

// FuzzParseCredentials: any input parses or fails without panicking; an
// error never echoes the value of a secret_key line; a parsed secret never
// prints.
func FuzzParseCredentials(f *testing.F) {
	f.Add([]byte("VOLCENGINE_ACCESS_KEY=AK\nVOLCENGINE_SECRET_KEY=s3cr3tvalue\n"))
	f.Add([]byte(`{"access_key":"AK","secret_key":"s3cr3tvalue"}`))
	f.Add([]byte("secret_key=s3cr3tvalue\nbogus"))
	f.Add([]byte("secret_key=s3cr3tvalue\ncolour=red"))
	f.Add([]byte(`{"secret_key":"s3cr3tvalue",`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := volcengine.ParseCredentials(data, "fuzz")
		if err != nil {
			var keys []string
			var secrets []string
			for _, line := range strings.Split(string(data), "\n") {
				k, v, ok := strings.Cut(line, "=")
				keys = append(keys, k)
				k = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "export "))
				if ok && (k == "secret_key" || k == "VOLCENGINE_SECRET_KEY") {
					secrets = append(secrets, strings.TrimSpace(v))
				}
			}
			for _, s := range secrets {
				if len(s) < 6 || strings.Contains("fuzz: unknown key expected KEY=VALUE invalid JSON at byte", s) {
					continue
				}
				// A key is echoed only when it looks like a key name
				// (letters and underscores), which a real secret does not.
				echoedAsKey := false
				for _, k := range keys {
					k = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(k), "export "))
					echoedAsKey = echoedAsKey || (strings.Contains(k, s) && keyNameRE.MatchString(k))
				}
				if strings.Contains(err.Error(), s) && !echoedAsKey {
					t.Errorf("error echoes the secret %q: %v", s, err)
				}
			}
			return
		}
		if got := fmt.Sprint(cfg.SecretKey); cfg.SecretKey != "" && got != "[REDACTED]" {
			t.Errorf("the secret printed as %q", got)
		}
	})
}

// keyNameRE mirrors the package's rule for echoing an unknown key.
var keyNameRE = regexp.MustCompile(`^[A-Za-z_]{1,32}$`)

// The spot-mix options set the group's InstancesDistribution with each
// resize, as DescribeScalingGroups then shows it to any client; without
// them the group's own distribution is not touched; a value out of the
// API's range is refused at the option's key.
func TestSpotMixOptions(t *testing.T) {
	srv := volcenginetest.New()
	t.Cleanup(srv.Close)
	srv.AddGroup(volcenginetest.Group{ID: "scg-mixed", Min: 0, Max: 40, Desired: 2, InstanceIDs: []string{"i-1", "i-2"}})
	srv.AddGroup(volcenginetest.Group{ID: "scg-plain", Min: 0, Max: 40, Desired: 2, InstanceIDs: []string{"i-3", "i-4"}})
	getenv := env(map[string]string{"VOLCENGINE_ACCESS_KEY": volcenginetest.DefaultAccessKey, "VOLCENGINE_SECRET_KEY": secret})
	reg := actuator.NewRegistry()
	if err := reg.Register(volcengine.Name, volcengine.NewFactory(getenv, nil), volcengine.PoolOptions); err != nil {
		t.Fatal(err)
	}
	pool := func(group string, extra map[string]string) actuator.PoolConfig {
		opts := map[string]string{"region": volcenginetest.DefaultRegion, "endpoint": srv.URL, "scaling_group": group}
		maps.Copy(opts, extra)
		return actuator.PoolConfig{Name: group, Backend: volcengine.Name, Limits: planner.Limits{MaxInstances: 40}, Options: opts}
	}
	mixed := pool("scg-mixed", map[string]string{"on_demand_base": "4", "on_demand_percentage": "25", "spot_remedy": "true", "compensate_with_on_demand": "true"})
	for _, p := range []actuator.PoolConfig{mixed, pool("scg-plain", nil)} {
		a, err := reg.New(context.Background(), volcengine.Name, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.SetDesired(context.Background(), p.Name, 12, "forecast"); err != nil {
			t.Fatal(err)
		}
	}
	sess, err := session.NewSession(sdk.NewConfig().WithRegion(volcenginetest.DefaultRegion).
		WithCredentials(credentials.NewStaticCredentials(volcenginetest.DefaultAccessKey, secret, "")).
		WithEndpoint(srv.URL).WithDisableSSL(true).WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	out, err := autoscaling.New(sess).DescribeScalingGroups(&autoscaling.DescribeScalingGroupsInput{ScalingGroupIds: sdk.StringSlice([]string{"scg-mixed", "scg-plain"})})
	if err != nil || len(out.ScalingGroups) != 2 {
		t.Fatalf("DescribeScalingGroups: %v, %v", out, err)
	}
	for _, g := range out.ScalingGroups {
		d := g.InstancesDistribution
		switch sdk.StringValue(g.ScalingGroupId) {
		case "scg-mixed":
			if d == nil || sdk.Int32Value(d.OnDemandBaseCapacity) != 4 || sdk.Int32Value(d.OnDemandPercentageAboveBaseCapacity) != 25 ||
				!sdk.BoolValue(d.SpotInstanceRemedy) || !sdk.BoolValue(d.CompensateWithOnDemand) || sdk.Int32Value(g.DesireInstanceNumber) != 12 {
				t.Errorf("scg-mixed: desired %d, distribution %v; want 12 with base 4, 25%% on demand above it, remedy and compensation",
					sdk.Int32Value(g.DesireInstanceNumber), d)
			}
		case "scg-plain":
			if d != nil {
				t.Errorf("scg-plain: distribution %v, want the group's own (none set)", d)
			}
		}
	}
	bad := pool("scg-mixed", map[string]string{"on_demand_percentage": "150"})
	if _, err := reg.New(context.Background(), volcengine.Name, bad); err == nil || !strings.Contains(err.Error(), "options.on_demand_percentage") {
		t.Errorf("a percentage of 150: %v, want it refused at options.on_demand_percentage", err)
	}
}
