package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
)

// FuzzServeConfig parses any configuration file with the back-end table
// serve uses (backendOptions, so every back-end's declared options), then
// builds each accepted pool's back-end the way serve does (through a
// registry of that table; volcengine.ConfigForPool and New): nothing
// panics, a refused file is a list of problems, the options of an accepted
// pool decode without one, and a back-end that refuses an accepted pool
// names the pool. The kubescale factory runs without the ca_file and
// token_file options, which name files to read.
func FuzzServeConfig(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "spec", "testdata", "*.yml"))
	seeds = append(seeds, filepath.Join("..", "..", "docs", "forecaster.yaml"))
	for _, file := range seeds {
		if raw, err := os.ReadFile(file); err == nil {
			f.Add(raw)
		}
	}
	f.Add([]byte("pools:\n  - {name: asg-gpu, backend: volcengine, max: 4, rps_per_instance: 1, options: {region: cn-beijing, endpoint: \"http://127.0.0.1:1\", timeout: 2s, instances: \"i-1, i-2\"}}\n"))
	f.Add([]byte("pools:\n  - {name: sd, backend: kubescale, max: 4, rps_per_instance: 1, options: {api_server: \"http://127.0.0.1:1\", namespace: inference, workload: sd, resource: statefulsets}}\n"))
	env := map[string]string{volcengine.EnvAccessKey: "AKLTfuzzaccesskey", volcengine.EnvSecretKey: "fuzz-secret-key", volcengine.EnvRegion: "cn-beijing"}
	getenv := func(k string) string { return env[k] }
	log := slog.New(slog.DiscardHandler)
	backends := backendOptions()
	reg := actuator.NewRegistry()
	for name, factory := range map[string]actuator.Factory{kubescale.Name: kubescale.NewFactory(getenv, log, redact.New()), dryrun.Name: dryrun.Factory(log)} {
		if err := reg.Register(name, factory, backends[name]); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		file, err := poolspec.Parse(raw, "fuzz.yaml", backendOptions())
		if err != nil {
			var problems poolspec.Errors
			if !errors.As(err, &problems) || len(problems) == 0 {
				t.Fatalf("error %v is not a list of problems", err)
			}
			return
		}
		for _, p := range file.Pools {
			pool := p.Actuator()
			if _, problems := backends[p.Backend].Decode(pool); len(problems) > 0 {
				t.Fatalf("pool %s: the spec accepted options its back-end refuses: %v", p.Name, problems)
			}
			var err error
			switch p.Backend {
			case volcengine.Name:
				var cfg volcengine.Config
				if cfg, err = volcengine.ConfigForPool(pool, getenv); err == nil {
					_, err = volcengine.New(cfg, volcengine.Options{Logger: log})
					if err != nil {
						t.Fatalf("pool %s: ConfigForPool accepted what New refuses: %v", p.Name, err)
					}
				}
			case kubescale.Name:
				opts := map[string]string{}
				for k, v := range pool.Options {
					if k != "ca_file" && k != "token_file" {
						opts[k] = v
					}
				}
				opts["ca_file"], opts["token_file"] = "", ""
				pool.Options = opts
				_, err = reg.New(context.Background(), p.Backend, pool)
			case dryrun.Name:
				_, err = reg.New(context.Background(), p.Backend, pool)
			}
			if err != nil && !strings.Contains(err.Error(), p.Name) && !strings.Contains(err.Error(), strconv.Quote(p.Name)) {
				t.Fatalf("pool %s refused without its name: %v", p.Name, err)
			}
		}
	})
}
