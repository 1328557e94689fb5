package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/remote"
)

// serveFlags are the command line of 'forecaster serve'.
type serveFlags struct {
	config, listen, storeSpec, auditLog, kedaListen, releaseTokenFile string
	influx                                                            influx.Config
	once                                                              bool
}

// runServe implements 'forecaster serve': the long-running scaling service.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "--config FILE [FLAGS]",
		"Runs the scaling service: every interval, for every pool in the config, reads demand from the store,\n"+
			"refits the forecast when due, decides capacity (forecast plan, reactive rules, schedule floors) and\n"+
			"applies it through the pool's actuator. Serves /metrics, /healthz, /api/v1/pools and, when a release\n"+
			"token is set ("+releasehook.EnvToken+" or --release-token-file), POST /api/v1/release.", stderr)
	var f serveFlags
	fs.StringVar(&f.config, "config", "", "service configuration file (YAML, see docs/forecaster.yaml); required")
	fs.StringVar(&f.listen, "listen", "", "HTTP address for the API and /metrics (overrides the config; default 127.0.0.1:9109)")
	fs.StringVar(&f.storeSpec, "store", "embedded:prewarm.db", "store: embedded:PATH, or http://HOST:PORT to read a running collector's store (its --listen), or use the --influx-* flags")
	fs.StringVar(&f.influx.URL, "influx-url", "", "InfluxDB URL (2.x, or 1.8+ with Flux enabled); selects the InfluxDB store")
	fs.StringVar(&f.influx.Org, "influx-org", "-", "InfluxDB organisation (1.8: -)")
	fs.StringVar(&f.influx.Bucket, "influx-bucket", "prewarm/autogen", "InfluxDB bucket (1.8: database/retention-policy)")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the actuators' audit lines (JSON) to this file (overrides the config)")
	fs.StringVar(&f.kedaListen, "keda-listen", "127.0.0.1:9110", "gRPC address of the KEDA external scaler, when a pool uses the keda back-end")
	fs.StringVar(&f.releaseTokenFile, "release-token-file", "", "file holding the release hook's bearer token (else $"+releasehook.EnvToken+")")
	fs.BoolVar(&f.once, "once", false, "take one decision for every pool, print their state as JSON and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q (the configuration file goes after --config)", fs.Arg(0))
	}
	if f.config == "" {
		return usageErrorf("--config is required")
	}
	f.influx.Token = os.Getenv("INFLUX_TOKEN")
	return serve(ctx, f, stdout, stderr)
}

func serve(ctx context.Context, f serveFlags, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := service.LoadConfig(f.config)
	if err != nil {
		return err
	}
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.auditLog != "" {
		cfg.AuditLog = f.auditLog
	}
	db, err := openStore(ctx, f.storeSpec, f.influx)
	if err != nil {
		return err
	}
	defer db.Close()

	token, err := releaseToken(f.releaseTokenFile)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	acts, backends, closeActs, err := buildActuators(ctx, cfg, reg, log, token)
	if err != nil {
		return err
	}
	defer closeActs()
	metrics, err := service.NewMetrics(reg)
	if err != nil {
		return err
	}
	svc, err := service.New(cfg, service.Deps{Store: db, Actuators: acts, Logger: log, Metrics: metrics})
	if err != nil {
		return err
	}
	if f.once {
		err := svc.Tick(ctx)
		printJSON(stdout, svc.Status())
		return err
	}
	release, err := releaseHandler(cfg, acts, backends, token, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kedaErr := make(chan error, 1)
	if s, ok := backends[keda.Name].(*keda.Scaler); ok {
		// KEDA pools get their capacity only through this server: if it
		// cannot listen or dies, the whole service stops with its error.
		go func() {
			err := s.ListenAndServe(ctx, f.kedaListen)
			if err != nil {
				err = fmt.Errorf("KEDA external scaler (--keda-listen %s): %w", f.kedaListen, err)
			}
			kedaErr <- err
			cancel()
		}()
	} else {
		kedaErr <- nil
	}
	err = serveHTTP(ctx, cfg.Listen, svc.Handler(reg, release), svc.Run, log)
	cancel()
	return errors.Join(err, <-kedaErr) // wait for the gRPC server's graceful stop
}

// openStore opens the store the flags name: InfluxDB, a collector's query
// API (http:// or https://, read-only; the collector keeps writing its
// embedded file, which only one process can open) or an embedded file.
func openStore(ctx context.Context, spec string, ic influx.Config) (store.Store, error) {
	if ic.URL != "" {
		return influx.New(ctx, ic)
	}
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		s, err := remote.New(spec, remote.Options{})
		if err != nil {
			return nil, usageErrorf("--store: %v", err)
		}
		return s, nil
	}
	path, ok := strings.CutPrefix(spec, "embedded:")
	if !ok || path == "" {
		return nil, usageErrorf("--store %q: want embedded:PATH, a collector's http://HOST:PORT (or --influx-url)", spec)
	}
	return embedded.Open(path, embedded.Options{Retention: 90 * 24 * time.Hour})
}

// releaseToken returns the release hook's token ($PREWARM_RELEASE_TOKEN,
// else the first line of file), "" when neither is set. A token file that
// cannot be read is an error, not a silently disabled hook.
func releaseToken(file string) (string, error) {
	token, err := releasehook.LoadToken(os.Getenv, file)
	if err != nil && file != "" {
		return "", fmt.Errorf("--release-token-file: %w", err)
	}
	return token, nil
}

// buildActuators creates each pool's back-end through the registry and
// wraps it in actuator.Safe, whose logs and audit lines redact the secrets
// (the cloud key, the InfluxDB token, the release token, from the
// environment or a file). backends holds one instance per back-end name.
func buildActuators(ctx context.Context, cfg service.Config, reg prometheus.Registerer, log *slog.Logger, releaseToken string) (map[string]*actuator.Safe, map[string]actuator.Actuator, func(), error) {
	audit := io.Discard
	closeAudit := func() {}
	if cfg.AuditLog != "" {
		f, err := os.OpenFile(cfg.AuditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the audit log: %w", err)
		}
		audit, closeAudit = f, func() { f.Close() }
	}
	metrics, err := actuator.NewMetrics(reg)
	if err != nil {
		closeAudit()
		return nil, nil, nil, err
	}
	fleet := simulated.New(simulated.Options{BootDelay: simulatedBootDelay(cfg)})
	scaler := keda.New(keda.Options{Logger: log})
	registry := actuator.NewRegistry()
	for name, factory := range map[string]actuator.Factory{
		dryrun.Name:     dryrun.Factory(log),
		simulated.Name:  fleet.Factory(),
		keda.Name:       scaler.Factory(),
		volcengine.Name: volcengine.NewFactory(os.Getenv, log),
		kubescale.Name:  kubescale.NewFactory(os.Getenv, log),
	} {
		if err := registry.Register(name, factory); err != nil {
			closeAudit()
			return nil, nil, nil, err
		}
	}
	acts := map[string]*actuator.Safe{}
	backends := map[string]actuator.Actuator{}
	secrets := []string{os.Getenv("VOLCENGINE_SECRET_KEY"), os.Getenv("INFLUX_TOKEN"), releaseToken}
	for _, p := range cfg.Pools {
		inner, err := registry.New(ctx, p.Backend, p.Actuator())
		if err != nil {
			closeAudit()
			return nil, nil, nil, fmt.Errorf("pool %q: %w", p.Name, err)
		}
		backends[p.Backend] = inner
		acts[p.Name] = actuator.NewSafe(inner, actuator.SafetyOptions{Pools: []actuator.PoolConfig{p.Actuator()},
			Audit: audit, Metrics: metrics, Logger: log, Secrets: nonEmpty(secrets)})
	}
	return acts, backends, closeAudit, nil
}

// releaseHandler builds POST /api/v1/release when a token is configured
// (nil otherwise). Releases go through the first pool's actuator, or the
// first volcengine pool's when there is one; volcengine pools also get the
// membership check.
func releaseHandler(cfg service.Config, acts map[string]*actuator.Safe, backends map[string]actuator.Actuator, token string, log *slog.Logger) (http.Handler, error) {
	if token == "" {
		log.Info("release hook disabled: no token", "hint", "set "+releasehook.EnvToken+" or --release-token-file")
		return nil, nil
	}
	var pools []actuator.PoolConfig
	var releaser *actuator.Safe
	for _, p := range cfg.Pools {
		pools = append(pools, p.Actuator())
		if releaser == nil || (p.Backend == volcengine.Name && releaser.Name() != volcengine.Name) {
			releaser = acts[p.Name]
		}
	}
	hc := releasehook.Config{Releaser: releaser, Token: token, Logger: log}
	if v, ok := backends[volcengine.Name].(*volcengine.Actuator); ok {
		hc.Allow = volcengine.AllowedByPools(v, pools)
		hc.Notes = volcengine.NoteRecorder
	}
	return releasehook.New(hc)
}

// serveHTTP serves h on addr while loop runs. When ctx ends (SIGTERM) the
// loop returns and the server shuts down gracefully (5s for requests in
// flight); when the server fails, the loop is stopped and its error
// returned.
func serveHTTP(ctx context.Context, addr string, h http.Handler, loop func(context.Context) error, log *slog.Logger) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s (listen in the config, or --listen): %w", addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(lis)
		if !errors.Is(err, http.ErrServerClosed) {
			cancel()
		}
		errc <- err
	}()
	log.Info("serving", "addr", lis.Addr().String())
	loopErr := loop(ctx)
	log.Info("shutting down")
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	shutdownErr := srv.Shutdown(shutdown)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("HTTP server on %s: %w", lis.Addr(), err)
	}
	return errors.Join(loopErr, shutdownErr)
}

func nonEmpty(values []string) []string {
	var out []string
	for _, v := range values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// simulatedBootDelay is the boot time of the simulated fleet: the longest
// boot_delay among the pools that use it (one fleet serves them all), or
// the planner's default.
func simulatedBootDelay(cfg service.Config) time.Duration {
	boot := time.Duration(0)
	for _, p := range cfg.Pools {
		if plan, err := p.Planner(); err == nil && p.Backend == simulated.Name {
			boot = max(boot, plan.Fleet.BootDelay)
		}
	}
	if boot == 0 {
		boot = planner.DefaultConfig().Fleet.BootDelay
	}
	return boot
}
