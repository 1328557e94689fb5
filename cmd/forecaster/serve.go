package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/dryrun"
	"github.com/prewarm/prewarm/actuator/keda"
	"github.com/prewarm/prewarm/actuator/kubescale"
	"github.com/prewarm/prewarm/actuator/releasehook"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/actuator/volcengine"
	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/internal/buildinfo"
	"github.com/prewarm/prewarm/internal/cli"
	"github.com/prewarm/prewarm/internal/httpserve"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/redact"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/service/state"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/influx"
	"github.com/prewarm/prewarm/store/open"
)

// serveFlags are the command line of 'forecaster serve'.
type serveFlags struct {
	config, listen, storeSpec, auditLog, statePath, kedaListen, releaseTokenFile, apiTokenFile string
	influx                                                                                     influx.Config
	once, apply, checkConfig                                                                   bool
	logLevel                                                                                   cli.LogLevelFlag
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
	fs.StringVar(&f.storeSpec, "store", "embedded:prewarm.db", "store: embedded:PATH; http://HOST:PORT to read a running collector's store (its --listen); prometheus:http://HOST:9090[?resolution=15s] to read Prometheus (read-only); or use the --influx-* flags")
	fs.StringVar(&f.influx.URL, "influx-url", "", "InfluxDB URL (2.x, or 1.8+ with Flux enabled); selects the InfluxDB store")
	fs.StringVar(&f.influx.Org, "influx-org", "-", "InfluxDB organisation (1.8: -)")
	fs.StringVar(&f.influx.Bucket, "influx-bucket", "prewarm/autogen", "InfluxDB bucket (1.8: database/retention-policy)")
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
	f.influx.Token = os.Getenv("INFLUX_TOKEN")
	if f.checkConfig {
		return checkConfig(f.config, stdout)
	}
	return serve(ctx, f, stdout, stderr)
}

// backendOptions are the back-ends this binary ships and the pool options
// each declares: the table the pool spec checks `options:` against
// (poolspec.Load(path, backendOptions())) and the registry registers.
func backendOptions() poolspec.Backends {
	return poolspec.Backends{
		dryrun.Name:     dryrun.PoolOptions,
		simulated.Name:  simulated.PoolOptions,
		keda.Name:       keda.PoolOptions,
		kubescale.Name:  kubescale.PoolOptions,
		volcengine.Name: volcengine.PoolOptions,
	}
}

// loadConfig reads the configuration; its problems exit 2.
func loadConfig(path string) (*poolspec.File, error) {
	file, err := poolspec.Load(path, backendOptions())
	var problems poolspec.Errors
	if errors.As(err, &problems) {
		return nil, &exitError{code: 2, err: fmt.Errorf("invalid configuration:\n%w", err)}
	}
	return file, err
}

// checkConfig implements --check-config.
func checkConfig(path string, stdout io.Writer) error {
	file, err := loadConfig(path)
	if err != nil {
		return err
	}
	names := make([]string, len(file.Pools))
	for i, p := range file.Pools {
		names[i] = fmt.Sprintf("%s (%s, %s)", p.Name, p.Backend, p.Mode)
	}
	fmt.Fprintf(stdout, "%s: valid: %d pools: %s\n", path, len(file.Pools), strings.Join(names, ", "))
	return nil
}

func serve(ctx context.Context, f serveFlags, stdout, stderr io.Writer) error {
	// Every secret the service knows, masked on every path out: log
	// lines, API error fields, audit lines, errors returned.
	redactor := redact.New(os.Getenv("INFLUX_TOKEN"), os.Getenv(volcengine.EnvAccessKey), os.Getenv(volcengine.EnvSecretKey))
	log := slog.New(slog.NewTextHandler(redactor.Writer(stderr), &slog.HandlerOptions{Level: f.logLevel.Level}))
	file, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	if f.listen != "" {
		file.Listen = f.listen
	}
	if f.auditLog != "" {
		file.AuditLog = f.auditLog
	}
	if f.statePath != "" {
		file.StateFile = f.statePath
	}
	releaseTok, err := readToken(releasehook.EnvToken, f.releaseTokenFile, "--release-token-file")
	if err != nil {
		return err
	}
	apiTok, err := readToken(service.EnvAPIToken, f.apiTokenFile, "--api-token-file")
	if err != nil {
		return err
	}
	redactor.Add(releaseTok, apiTok)
	addVolcengineKeys(redactor, file)

	db, err := openStore(ctx, f.storeSpec, f.influx)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := openState(file.StatePath(), f.once && !f.apply, log)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector("forecaster"))
	b, err := newBackends(file, reg, log, redactor)
	if err != nil {
		return err
	}
	defer b.close()
	metrics, err := service.NewMetrics(reg)
	if err != nil {
		return err
	}
	deps := service.Deps{Store: db, Backend: b.build, Safety: b.safety, State: st,
		Preview: f.once && !f.apply, Logger: log, Metrics: metrics, Redactor: redactor}
	if file.Election.Enabled && !f.once {
		el, err := startElection(file.Election, os.Getenv, log)
		if err != nil {
			return err
		}
		defer el.stop() // after the decisions in flight: the buckets are released last
		deps.Shards, deps.ShardStore = el.shards, el.store
	}
	svc, err := service.New(ctx, file, deps)
	if err != nil {
		return err
	}
	if f.once {
		if f.apply && file.Election.Enabled {
			return usageErrorf("--once --apply with election.enabled: a one-off run owns no pool; apply through the running replicas")
		}
		err := svc.Tick(ctx)
		printJSON(stdout, svc.Status())
		if !f.apply {
			log.Info("preview: nothing was applied (--apply applies the pools in mode active)")
		}
		return err
	}
	release, err := releaseHandler(file, b, svc, releaseTok, log)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopReload := reloadOnHUP(ctx, f.config, svc, log)
	defer stopReload()
	kedaErr := make(chan error, 1)
	if s, ok := b.backends[keda.Name].(*keda.Scaler); ok {
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
	handler := svc.Handler(service.HTTPOptions{Gatherer: reg, Release: release, APIToken: apiTok})
	err = serveHTTP(ctx, file.Listen, handler, svc.Run, log)
	cancel()
	return errors.Join(err, <-kedaErr) // wait for the gRPC server's graceful stop
}

// reloadOnHUP reloads the configuration on SIGHUP until ctx ends. A file
// with problems is refused with each of them logged, and the running
// configuration stays.
func reloadOnHUP(ctx context.Context, path string, svc *service.Service, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
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
	}()
	return func() {
		signal.Stop(hup)
		<-done
	}
}

// openState opens the state file. A preview (--once without --apply)
// writes nothing: it reads the file when it can, and goes without it
// when there is none or a running serve holds it.
func openState(path string, preview bool, log *slog.Logger) (*state.DB, error) {
	if !preview {
		return state.Open(path, state.Options{})
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	st, err := state.Open(path, state.Options{ReadOnly: true, LockTimeout: 200 * time.Millisecond})
	if err != nil {
		log.Warn("preview without the saved state", "reason", err)
		return nil, nil
	}
	return st, nil
}

// openStore opens the store --store (or the --influx-* flags) names,
// embedded files with serve's retention; a spec written wrong is a usage
// error.
func openStore(ctx context.Context, spec string, ic influx.Config) (store.Store, error) {
	s, err := open.Store(ctx, spec, open.Options{Influx: ic, Embedded: embedded.Options{Retention: 90 * 24 * time.Hour}})
	var bad *open.SpecError
	switch {
	case errors.Is(err, open.ErrUnknownScheme):
		return nil, usageErrorf("--store %v (or --influx-url)", err)
	case errors.As(err, &bad):
		return nil, usageErrorf("--store: %v", err)
	}
	return s, err
}

// readToken returns a bearer token from $env, else the first line of file,
// "" when neither is set. A token file that cannot be read is an error, not
// a silently disabled endpoint.
func readToken(env, file, flag string) (string, error) {
	if t := strings.TrimSpace(os.Getenv(env)); t != "" {
		return t, nil
	}
	if file == "" {
		return "", nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: reading token file: %w", flag, err)
	}
	t, _, _ := strings.Cut(string(data), "\n")
	if t = strings.TrimSpace(t); t == "" {
		return "", fmt.Errorf("%s: token file %s is empty", flag, file)
	}
	return t, nil
}

// addVolcengineKeys adds the keys of the volcengine pools' credentials
// files to the redactor (the environment's are there already).
func addVolcengineKeys(r *redact.Redactor, file *poolspec.File) {
	for _, p := range file.Pools {
		if p.Backend != volcengine.Name {
			continue
		}
		if cfg, err := volcengine.ConfigForPool(p.Actuator(), os.Getenv); err == nil {
			r.Add(cfg.AccessKey, cfg.SecretKey.Reveal())
		}
	}
}

// backends is the actuator wiring of one serve: the registry of the
// back-ends this binary ships, the one instance of each shared back-end,
// and the template of every pool's actuator.Safe.
type backends struct {
	registry *actuator.Registry
	backends map[string]actuator.Actuator // one per back-end name, for the KEDA server and releases
	safety   actuator.SafetyOptions
	close    func()
}

// newBackends registers the back-ends and opens the audit log. Safe's logs
// and audit lines go through redactor.
func newBackends(file *poolspec.File, reg prometheus.Registerer, log *slog.Logger, redactor *redact.Redactor) (*backends, error) {
	audit := io.Discard
	closeAudit := func() {}
	if file.AuditLog != "" {
		f, err := os.OpenFile(file.AuditLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening the audit log: %w", err)
		}
		audit, closeAudit = actuator.NewSyncWriter(f), func() { f.Close() }
	}
	metrics, err := actuator.NewMetrics(reg)
	if err != nil {
		closeAudit()
		return nil, err
	}
	fleet := simulated.New(simulated.Options{BootDelay: simulatedBootDelay(file)})
	scaler := keda.New(keda.Options{Logger: log})
	factories := map[string]actuator.Factory{
		dryrun.Name:     dryrun.Factory(log),
		simulated.Name:  fleet.Factory(),
		keda.Name:       scaler.Factory(),
		volcengine.Name: volcengine.NewFactory(os.Getenv, log),
		kubescale.Name:  kubescale.NewFactory(os.Getenv, log, redactor),
	}
	b := &backends{registry: actuator.NewRegistry(), backends: map[string]actuator.Actuator{}, close: closeAudit,
		safety: actuator.SafetyOptions{Audit: audit, Metrics: metrics, Logger: log, Redactor: redactor}}
	for name, options := range backendOptions() {
		if err := b.registry.Register(name, factories[name], options); err != nil {
			closeAudit()
			return nil, err
		}
	}
	return b, nil
}

// build creates a pool's back-end (service.Deps.Backend).
func (b *backends) build(ctx context.Context, pool actuator.PoolConfig) (actuator.Actuator, error) {
	inner, err := b.registry.New(ctx, pool.Backend, pool)
	if err != nil {
		return nil, err
	}
	if _, ok := b.backends[pool.Backend]; !ok {
		b.backends[pool.Backend] = inner
	}
	return inner, nil
}

// releaseHandler builds POST /api/v1/release when a token is configured
// (nil otherwise). Releases go through the first pool's back-end, or the
// first volcengine pool's when there is one; volcengine pools also get the
// membership check, which names the instance's pool. With election on,
// only the replica acting for that pool releases (svc.ActsFor). Its pools
// are those at start: a reload does not change them.
func releaseHandler(file *poolspec.File, b *backends, svc *service.Service, token string, log *slog.Logger) (http.Handler, error) {
	if token == "" {
		log.Info("release hook disabled: no token", "hint", "set "+releasehook.EnvToken+" or --release-token-file")
		return nil, nil
	}
	var pools []actuator.PoolConfig
	var names []string
	var releaser actuator.Actuator
	for _, p := range file.Pools {
		pools = append(pools, p.Actuator())
		names = append(names, p.Name)
		if releaser == nil || (p.Backend == volcengine.Name && releaser.Name() != volcengine.Name) {
			releaser = b.backends[p.Backend]
		}
	}
	opts := b.safety
	opts.Pools = pools
	hc := releasehook.Config{Releaser: actuator.NewSafe(releaser, opts), Token: token, Logger: log, Pools: names}
	if file.Election.Enabled {
		hc.Route, hc.RetryAfter = svc.ActsFor, file.Election.RetryPeriod
	}
	if v, ok := b.backends[volcengine.Name].(*volcengine.Actuator); ok {
		hc.Locate = volcengine.PoolOfInstance(v, pools)
		hc.Notes = volcengine.NoteRecorder
	}
	return releasehook.New(hc)
}

// serveHTTP serves h on addr while loop runs, with httpserve's limits on
// each request's time and on the connections open at once. When ctx ends (SIGTERM) the
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
	limits := httpserve.Defaults()
	srv := httpserve.Server(h, limits)
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(httpserve.Limit(lis, limits))
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

// simulatedBootDelay is the boot time of the simulated fleet: the longest
// boot_delay among the pools that use it (one fleet serves them all), or
// the planner's default.
func simulatedBootDelay(file *poolspec.File) time.Duration {
	boot := time.Duration(0)
	for _, p := range file.Pools {
		if p.Backend == simulated.Name {
			boot = max(boot, p.Fleet.BootDelay)
		}
	}
	if boot == 0 {
		boot = planner.DefaultConfig().Fleet.BootDelay
	}
	return boot
}

// sharing is a running Sharder and its shard store, the service's Shards
// and ShardStore.
type sharing struct {
	shards service.Shards
	store  service.ShardStore
	stop   func() // releases every bucket and waits for that
}

// electionShards is a Sharder with this replica's identity and its bucket
// count.
type electionShards struct {
	*election.Sharder
	identity string
	buckets  int
}

// Identity is this replica's name among the replicas.
func (e electionShards) Identity() string { return e.identity }

// Bucket is the bucket pool hashes into.
func (e electionShards) Bucket(pool string) int { return election.Bucket(pool, e.buckets) }

// startElection connects to the Kubernetes API (the pod's service account,
// or election.api_server) and campaigns for the buckets until stop.
func startElection(cfg poolspec.Election, getenv func(string) string, log *slog.Logger) (*sharing, error) {
	namespace, identity, err := electionNames(cfg, getenv)
	if err != nil {
		return nil, err
	}
	rc, err := electionRESTConfig(cfg)
	if err != nil {
		return nil, err
	}
	coord, err := coordinationv1client.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("election: Kubernetes client: %w", err)
	}
	core, err := corev1client.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("election: Kubernetes client: %w", err)
	}
	timings := election.Timings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}
	sharder, err := election.NewSharder(coord, election.ShardConfig{Namespace: namespace, Identity: identity, Prefix: cfg.ShardPrefix,
		Buckets: cfg.Buckets, Timings: timings, Logger: logr.FromSlogHandler(log.Handler()).WithValues("component", "election")})
	if err != nil {
		return nil, err
	}
	store, err := election.NewStore(core, namespace, cfg.ShardPrefix)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sharder.Run(ctx)
	}()
	log.Info("election on: pools shared with the other replicas", "identity", identity, "namespace", namespace,
		"buckets", cfg.Buckets, "lease_duration", cfg.LeaseDuration)
	stop := func() {
		cancel()
		<-done
	}
	return &sharing{shards: electionShards{Sharder: sharder, identity: identity, buckets: cfg.Buckets}, store: store, stop: stop}, nil
}

// serviceAccountNamespace is where a pod's service account names its
// namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// electionNames resolves the namespace (election.namespace, else
// $POD_NAMESPACE, else the service account's) and the identity
// (election.identity, else $POD_NAME, else the host name).
func electionNames(cfg poolspec.Election, getenv func(string) string) (namespace, identity string, err error) {
	namespace = cmp.Or(cfg.Namespace, getenv("POD_NAMESPACE"))
	if namespace == "" {
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
			namespace = strings.TrimSpace(string(b))
		}
	}
	if namespace == "" {
		return "", "", errors.New("election.namespace: not set, and neither $POD_NAMESPACE nor a service account namespace is there")
	}
	identity = cmp.Or(cfg.Identity, getenv("POD_NAME"))
	if identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", "", fmt.Errorf("election.identity: not set, no $POD_NAME, and no host name: %w", err)
		}
		identity = strings.ToLower(host)
	}
	return namespace, identity, nil
}

// electionRESTConfig is the election's API client: the pod's service
// account, or election.api_server (a test's loopback stand-in, without
// credentials). Its rate limit follows the election's own calls: a
// replica makes at most one call per bucket and two for its membership
// each retry period, which client-go's default limit (5 a second) would
// throttle past the renew deadline; it allows 1.5 times that, and never
// less than 20 a second.
func electionRESTConfig(cfg poolspec.Election) (*rest.Config, error) {
	var rc *rest.Config
	if cfg.APIServer != "" {
		rc = &rest.Config{Host: cfg.APIServer}
	} else {
		var err error
		if rc, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("election: not running in a Kubernetes pod (election.api_server is for a test's stand-in): %w", err)
		}
	}
	perSecond := 1.5 * float64(cfg.Buckets+2) / max(cfg.RetryPeriod.Seconds(), 0.001)
	rc.QPS = float32(max(20, perSecond))
	rc.Burst, rc.UserAgent = int(2*rc.QPS), "prewarm-forecaster"
	return rc, nil
}
