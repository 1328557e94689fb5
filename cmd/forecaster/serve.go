package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/prewarm/prewarm/actuator/builtin"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/internal/httpserve"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/open"
)

// serveFlags are the command line of 'forecaster serve'.
type serveFlags struct {
	config, listen, auditLog, statePath, kedaListen, releaseTokenFile, apiTokenFile string
	store                                                                           open.Flags
	once, apply, checkConfig                                                        bool
	logLevel                                                                        cli.LogLevelFlag
}

// runServe implements 'forecaster serve': the long-running scaling service.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "--config FILE [FLAGS]",
		"Runs the scaling service: every interval, for every pool in the config, reads demand from the store,\n"+
			"refits the forecast when due, decides capacity (forecast plan, reactive rules, schedule floors) and,\n"+
			"for pools in mode active, applies it through the pool's actuator; forecast-only pools (the default)\n"+
			"show what they would do. Each pool's last change, clocks, gate and mode are kept in a state file\n"+
			"across restarts. Serves the status page at /, /metrics, /healthz (alive), /readyz (decisions succeed),\n"+
			"the JSON API under /api/v1/pools (status, forecast, schedule, history, decisions), POST\n"+
			"/api/v1/pools/NAME/mode (with "+service.EnvAPIToken+" or --api-token-file) and POST /api/v1/release (with\n"+
			releasehook.EnvToken+" or --release-token-file). SIGHUP reloads the config and refits every pool at its next\n"+
			"decision (send it after 'forecaster import'); SIGTERM finishes the decisions in flight and stops.\n"+
			"'forecaster demo' runs it all on synthetic demand, a simulated clock and fleet.", stderr)
	var f serveFlags
	fs.StringVar(&f.config, "config", "", "service configuration file (YAML, see docs/forecaster.yaml); required")
	fs.BoolVar(&f.checkConfig, "check-config", false, "check the configuration, print every problem and exit: 0 when valid, 2 when not")
	fs.StringVar(&f.listen, "listen", "", "HTTP address of the status page, the API and /metrics (overrides the config; default 127.0.0.1:9109)")
	f.store.Register(fs, "embedded:prewarm.db", "store: embedded:PATH; http://HOST:PORT to read a running collector's store (its --listen); prometheus:http://HOST:9090[?resolution=15s] to read Prometheus (read-only); or use the --influx-* flags")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the actuators' audit lines (JSON) to this file (overrides the config)")
	fs.StringVar(&f.statePath, "state", "", "state file kept across restarts (overrides the config's state_file; default prewarm-state.db beside the audit log)")
	fs.StringVar(&f.kedaListen, "keda-listen", "127.0.0.1:9110", "gRPC address of the KEDA external scaler, when a pool uses the keda back-end")
	fs.StringVar(&f.releaseTokenFile, "release-token-file", "", "file holding the release hook's bearer token (else $"+releasehook.EnvToken+")")
	fs.StringVar(&f.apiTokenFile, "api-token-file", "", "file holding the bearer token of POST /api/v1/pools/NAME/mode (else $"+service.EnvAPIToken+")")
	f.logLevel = cli.LogLevelFlag{Level: slog.LevelInfo}
	fs.Var(&f.logLevel, "log-level", "least severe log lines written to stderr: "+strings.Join(cli.LogLevels, ", "))
	fs.BoolVar(&f.once, "once", false, "take one decision for every pool, print their state as JSON and exit; applies nothing without --apply")
	fs.BoolVar(&f.apply, "apply", false, "with --once: apply the decisions of the pools in mode active")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageErrorf("unexpected argument %q (the configuration file goes after --config)", fs.Arg(0))
	case f.config == "":
		return usageErrorf("--config is required")
	case f.apply && !f.once:
		return usageErrorf("--apply goes with --once (the service applies the active pools' decisions anyway)")
	}
	if f.checkConfig {
		return checkConfig(f.config, stdout)
	}
	return serve(ctx, f, stdout, stderr)
}

// backendOptions are the back-ends this binary ships and the pool options
// each declares (builtin.Options): what the pool spec checks against.
func backendOptions() poolspec.Backends { return builtin.Options() }

// loadConfig reads the configuration; its problems exit 2.
func loadConfig(path string) (*poolspec.File, error) {
	file, err := poolspec.Load(path, backendOptions())
	var problems poolspec.Errors
	if errors.As(err, &problems) {
		return nil, &exitError{code: 2, err: fmt.Errorf("invalid configuration:\n%w", err)}
	}
	return file, err
}

// checkConfig implements --check-config: the file as loadConfig reads
// it, then the tiers each pool asks of its back-end as serve checks them
// (service.CheckTiers, against the tiers each back-end declares), without
// building a back-end or calling a cloud API. Its problems exit 2.
func checkConfig(path string, stdout io.Writer) error {
	file, err := loadConfig(path)
	if err != nil {
		return err
	}
	if err := service.CheckTiers(file, builtin.Tiers); err != nil {
		all := []error{err}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			all = joined.Unwrap()
		}
		each := make([]error, len(all)) // one line a pool, each naming the file
		for i, e := range all {
			each[i] = fmt.Errorf("%s: %w", path, e)
		}
		return &exitError{code: 2, err: fmt.Errorf("invalid configuration:\n%w", errors.Join(each...))}
	}
	fmt.Fprintf(stdout, "%s: valid: %s\n", path, file.Summary())
	return nil
}

func serve(ctx context.Context, f serveFlags, stdout, stderr io.Writer) error {
	// Every secret the service knows, masked on every path out: log
	// lines, API error fields, audit lines, errors returned.
	redactor := redact.New(os.Getenv(open.EnvInfluxToken), os.Getenv(volcengine.EnvAccessKey), os.Getenv(volcengine.EnvSecretKey))
	log := slog.New(slog.NewTextHandler(redactor.Writer(stderr), &slog.HandlerOptions{Level: f.logLevel.Level}))
	file, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	file.Override(f.listen, f.auditLog, f.statePath)
	if f.once && f.apply && file.Election.Enabled {
		return usageErrorf("--once --apply with election.enabled: a one-off run owns no pool; apply through the running replicas")
	}
	releaseTok, err := cli.ReadToken(os.Getenv, releasehook.EnvToken, f.releaseTokenFile, "--release-token-file")
	if err != nil {
		return err
	}
	apiTok, err := cli.ReadToken(os.Getenv, service.EnvAPIToken, f.apiTokenFile, "--api-token-file")
	if err != nil {
		return err
	}
	redactor.Add(releaseTok, apiTok)
	redactor.Add(builtin.Secrets(file, os.Getenv)...)

	db, err := openStore(ctx, f.store)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := state.OpenFor(file.StatePath(), f.once && !f.apply, log)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector("forecaster"))
	b, err := builtin.New(file, builtin.Deps{Registerer: reg, Logger: log, Redactor: redactor, Getenv: os.Getenv})
	if err != nil {
		return err
	}
	defer b.Close()
	metrics, err := service.NewMetrics(reg)
	if err != nil {
		return err
	}
	deps := service.Deps{Store: db, Backend: b.Build, Safety: b.Safety, State: st,
		Preview: f.once && !f.apply, Logger: log, Metrics: metrics, Redactor: redactor}
	var ownerAddress func(identity string) string // the other replicas' API URLs, with election on
	if file.Election.Enabled && !f.once {
		el, err := election.Join(file.Election.JoinConfig(file.Listen), os.Getenv, log)
		if err != nil {
			return err
		}
		defer el.Stop() // after the decisions in flight: the buckets are released last
		deps.Shards, deps.ShardStore, ownerAddress = el, el.Store, el.Address
	}
	svc, err := service.New(ctx, file, deps)
	if err != nil {
		return err
	}
	if f.once {
		err := svc.Tick(ctx)
		printJSON(stdout, svc.Status())
		if !f.apply {
			log.Info("preview: nothing was applied (--apply applies the pools in mode active)")
		}
		return err
	}
	release, err := releaseHandler(file, b, svc, ownerAddress, releaseTok, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopReload := cli.OnSignal(ctx, syscall.SIGHUP, func(ctx context.Context) { reload(ctx, f.config, svc, log) })
	defer stopReload()
	var kedaErr <-chan error = closedChan()
	if s, ok := b.Built[keda.Name].(*keda.Scaler); ok {
		kedaErr = s.ServeInBackground(ctx, f.kedaListen, "--keda-listen", cancel) // its end stops the service
	}
	handler := svc.Handler(service.HTTPOptions{Gatherer: reg, Release: release, APIToken: apiTok})
	err = httpserve.RunWhile(ctx, file.Listen, "listen in the config, or --listen", handler, svc.Run, log)
	cancel()
	return errors.Join(err, <-kedaErr) // wait for the gRPC server's graceful stop
}

// reload reloads the configuration at path into svc. A file with problems
// is refused with each of them logged, and the running configuration
// stays.
func reload(ctx context.Context, path string, svc *service.Service, log *slog.Logger) {
	file, err := poolspec.Load(path, backendOptions())
	if err == nil {
		err = svc.Reload(ctx, file)
	}
	var problems poolspec.Errors
	switch {
	case errors.As(err, &problems):
		for _, p := range problems {
			log.Error("configuration not reloaded; the running one stays", "problem", p.String())
		}
	case err != nil:
		log.Error("configuration not reloaded; the running one stays", "err", err)
	default:
		log.Info("configuration reloaded on SIGHUP", "config", path)
	}
}

// openStore opens the store --store (or the --influx-* flags) names,
// embedded files with serve's retention; a spec written wrong is a usage
// error.
func openStore(ctx context.Context, f open.Flags) (store.Store, error) {
	opts := f.Options(os.Getenv)
	opts.Embedded = embedded.Options{Retention: embedded.DefaultRetention}
	s, err := open.Store(ctx, f.Spec, opts)
	var bad *open.SpecError
	switch {
	case errors.Is(err, open.ErrUnknownScheme):
		return nil, usageErrorf("--store %v (or --influx-url)", err)
	case errors.As(err, &bad):
		return nil, usageErrorf("--store: %v", err)
	}
	return s, err
}

// releaseHandler builds POST /api/v1/release when a token is configured
// (nil otherwise; builtin.Set.ReleaseHook). With election on, only the
// replica acting for the instance's pool releases (svc.ActsFor); another
// passes the request on to it (ownerAddress, from its member Lease).
func releaseHandler(file *poolspec.File, b *builtin.Set, svc *service.Service, ownerAddress func(string) string, token string,
	log *slog.Logger) (http.Handler, error) {
	if token == "" {
		log.Info("release hook disabled: no token", "hint", "set "+releasehook.EnvToken+" or --release-token-file")
		return nil, nil
	}
	hc := releasehook.Config{Token: token, Logger: log}
	if file.Election.Enabled {
		hc.Route, hc.RetryAfter, hc.Forward = svc.ActsFor, file.Election.RetryPeriod, ownerAddress
	}
	return b.ReleaseHook(file, hc)
}

// closedChan is a channel that yields nil: the end of a server not run.
func closedChan() <-chan error {
	c := make(chan error)
	close(c)
	return c
}
