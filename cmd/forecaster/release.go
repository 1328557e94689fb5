package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/builtin"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/redact"
)

// runRelease implements 'forecaster release': stop one instance through the
// cloud API, e.g. from a training job's last line. Credentials come from
// VOLCENGINE_* or --credentials; with --config it refuses instances outside
// the configured volcengine and volcengine-ecs pools and releases each
// through its own pool's back-end.
func runRelease(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("release", "--instance ID [FLAGS]",
		"Release (stop) one instance through the cloud API. On Volcengine this is ECS StopInstances\n"+
			"with StoppedMode=StopCharging, falling back to KeepCharging (and saying so) where the\n"+
			"instance type refuses it. Credentials come from VOLCENGINE_ACCESS_KEY, VOLCENGINE_SECRET_KEY,\n"+
			"VOLCENGINE_REGION (or --credentials); VOLCENGINE_ENDPOINT or --volcengine-endpoint overrides\n"+
			"the endpoint. With --config, instances outside the configured pools are refused, and each is\n"+
			"released through its pool's back-end and connection (an ECS pool's, a scaling group's).", stderr)
	instance := fs.String("instance", "", "instance ID to release, e.g. i-3tiefmkskq3vj0 (required)")
	provider := fs.String("provider", volcengine.Name, "cloud provider (only volcengine)")
	configPath := fs.String("config", "", "the forecaster's configuration (docs/forecaster.yaml); when set, only instances of its volcengine and volcengine-ecs pools may be released, each through its pool's settings")
	poolName := fs.String("pool", "", "with --config: only instances of this volcengine or volcengine-ecs pool may be released, through its settings")
	endpoint := fs.String("volcengine-endpoint", "", "OpenAPI endpoint, overriding VOLCENGINE_ENDPOINT (http:// for a plain-HTTP test server)")
	credentials := fs.String("credentials", "", "credentials file (KEY=VALUE or JSON); the environment wins over it")
	region := fs.String("region", "", "region, overriding VOLCENGINE_REGION")
	reason := fs.String("reason", "released by 'forecaster release'", "why, for the logs and audit")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long, retries included")
	logLevel := cli.LogLevelFlag{Level: slog.LevelWarn}
	fs.Var(&logLevel, "log-level", "least severe log lines written to stderr: "+strings.Join(cli.LogLevels, ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	case *instance == "":
		return usageErrorf("--instance is required")
	case *provider != volcengine.Name:
		return usageErrorf("--provider %q is not supported (supported: %s)", *provider, volcengine.Name)
	case *timeout <= 0:
		return usageErrorf("--timeout must be positive")
	case *poolName != "" && *configPath == "":
		return usageErrorf("--pool goes with --config")
	}

	pools, err := releasePools(*configPath, *poolName)
	if err != nil {
		return err
	}
	redactor := redact.New()
	logger := slog.New(slog.NewTextHandler(redactor.Writer(stderr), &slog.HandlerOptions{Level: logLevel.Level}))
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	set := volcengine.ReleaseSettings{Credentials: *credentials, Region: *region, Endpoint: *endpoint}
	releaser, pools, err := releaserOf(ctx, *instance, *configPath, pools, set, redactor, logger)
	if err != nil {
		return redactor.Error(err)
	}
	safe := actuator.NewSafe(releaser, actuator.SafetyOptions{
		Pools:    pools,
		Logger:   logger,
		Redactor: redactor,
	})
	ctx, stops := volcengine.RecordStops(ctx)
	if err := safe.Release(ctx, *instance, *reason); err != nil {
		return err
	}
	for _, s := range stops() {
		fmt.Fprintf(stdout, "released %s: %s (RequestId %s)\n", s.InstanceID, s.Note, s.RequestID)
	}
	return nil
}

// releaserOf is the back-end that releases instanceID, and the pool it
// belongs to (none without a configuration), adding the keys of the
// credentials it connects with to redactor. Without a configuration
// (configPath ""), it is the volcengine back-end the environment and the
// flags describe (volcengine.ReleaseConfig); with one, it is the
// back-end of the pool the instance belongs to among pools, a
// volcengine-ecs pool's or a scaling group's, each connected as its own
// options say with the flags over them (volcengine.BuildReleases), and an
// instance in none of them is refused.
func releaserOf(ctx context.Context, instanceID, configPath string, pools []actuator.PoolConfig, set volcengine.ReleaseSettings,
	redactor *redact.Redactor, logger *slog.Logger) (actuator.Actuator, []actuator.PoolConfig, error) {
	if configPath == "" {
		base, err := volcengine.LoadConfig(set.Credentials, os.Getenv)
		if err != nil {
			return nil, nil, err
		}
		cfg, err := volcengine.ReleaseConfig(base, set)
		redactor.Add(cfg.AccessKey, cfg.SecretKey.Reveal())
		if err != nil {
			return nil, nil, err
		}
		act, err := volcengine.New(cfg, volcengine.Options{Logger: logger})
		return act, nil, err
	}
	rel, keys, err := volcengine.BuildReleases(ctx, pools, set, os.Getenv, logger)
	redactor.Add(keys...)
	if err != nil {
		return nil, nil, err
	}
	pool, err := rel.PoolOf(ctx, instanceID, configPath)
	if err != nil {
		return nil, nil, err
	}
	i := slices.IndexFunc(pools, func(p actuator.PoolConfig) bool { return p.Name == pool })
	return rel.For(pool), pools[i : i+1], nil
}

// releasePools are the pools of the configuration at configPath (none
// when ""), poolName's only when set (builtin.ReleasePools).
func releasePools(configPath, poolName string) ([]actuator.PoolConfig, error) {
	if configPath == "" {
		return nil, nil
	}
	file, err := loadConfig(configPath)
	if err != nil {
		return nil, err
	}
	return builtin.ReleasePools(file, poolName)
}
