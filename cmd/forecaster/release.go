package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
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
// the configured pools.
func runRelease(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("release", "--instance ID [FLAGS]",
		"Release (stop) one instance through the cloud API. On Volcengine this is ECS StopInstances\n"+
			"with StoppedMode=StopCharging, falling back to KeepCharging (and saying so) where the\n"+
			"instance type refuses it. Credentials come from VOLCENGINE_ACCESS_KEY, VOLCENGINE_SECRET_KEY,\n"+
			"VOLCENGINE_REGION (or --credentials); VOLCENGINE_ENDPOINT or --volcengine-endpoint overrides\n"+
			"the endpoint. With --config, instances outside the configured pools are refused.", stderr)
	instance := fs.String("instance", "", "instance ID to release, e.g. i-3tiefmkskq3vj0 (required)")
	provider := fs.String("provider", volcengine.Name, "cloud provider (only volcengine)")
	configPath := fs.String("config", "", "the forecaster's configuration (docs/forecaster.yaml); when set, only instances of its volcengine pools may be released")
	poolName := fs.String("pool", "", "with --config: only instances of this volcengine pool may be released, through its settings")
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

	cfg, pools, err := releaseConfig(*credentials, *configPath, *poolName, *region, *endpoint)
	if err != nil {
		return err
	}
	redactor := redact.New(cfg.AccessKey, cfg.SecretKey.Reveal())
	logger := slog.New(slog.NewTextHandler(redactor.Writer(stderr), &slog.HandlerOptions{Level: logLevel.Level}))
	act, err := volcengine.New(cfg, volcengine.Options{Logger: logger})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *configPath != "" {
		if err := volcengine.RefuseOutsidePools(ctx, act, pools, *instance, *configPath); err != nil {
			return redactor.Error(err)
		}
	}
	safe := actuator.NewSafe(volcengine.RecycleMembers(act, pools), actuator.SafetyOptions{
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

// releaseConfig gathers the Volcengine connection settings and, when
// configPath is set, the pools of the forecaster's configuration (the one
// pool spec; with poolName, that pool only). Precedence, highest first: the
// --region and --volcengine-endpoint flags, the first volcengine pool of
// the config (its region, endpoint and credentials file), the environment,
// the --credentials file (volcengine.ReleaseConfig).
func releaseConfig(credentials, configPath, poolName, region, endpoint string) (volcengine.Config, []actuator.PoolConfig, error) {
	cfg, err := volcengine.LoadConfig(credentials, os.Getenv)
	if err != nil {
		return cfg, nil, err
	}
	pools, err := releasePools(configPath, poolName)
	if err != nil {
		return cfg, pools, err
	}
	cfg, err = volcengine.ReleaseConfig(cfg, pools, volcengine.ReleaseSettings{Credentials: credentials, Region: region, Endpoint: endpoint}, os.Getenv)
	return cfg, pools, err
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
