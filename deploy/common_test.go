package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// contract lists the metrics of the metric contract (docs/metrics.md)
// that the dashboard and the rules may use; names with a trailing _ are
// prefixes of existing families (prewarm_actuator_*, prewarm_collector_*).
var contract = []string{
	"prewarm_build_info",
	"prewarm_pool_mode",
	"prewarm_pool_wished_instances",
	"prewarm_pool_desired_instances",
	"prewarm_pool_planned_instances",
	"prewarm_pool_current_instances",
	"prewarm_pool_ready_instances",
	"prewarm_pool_booting_instances",
	"prewarm_pool_demand_rps",
	"prewarm_pool_forecast_rps",
	"prewarm_pool_forecast_gate",
	"prewarm_pool_forecast_mase",
	"prewarm_pool_boot_delay_seconds",
	"prewarm_pool_capacity_short_seconds",
	"prewarm_pool_policy",
	"prewarm_pool_slo_burn_rate",
	"prewarm_pool_saving_ratio",
	"prewarm_pool_decisions_total",
	"prewarm_pool_decision_failures_total",
	"prewarm_pool_gpu_hours_total",
	"prewarm_pool_cost_total",
	"prewarm_pool_static_cost_total",
	"prewarm_refit_duration_seconds",
	"prewarm_tick_duration_seconds",
	"prewarm_last_successful_tick_timestamp_seconds",
	"prewarm_election_owned_buckets",
	"prewarm_election_leader_changes_total",
	"prewarm_collector_last_store_write_timestamp_seconds",
	"prewarm_collector_ready",
	"prewarm_actuator_",
	"prewarm_collector_",
}

// contractAlerts are the alerts docs/metrics.md promises in rules.yml.
var contractAlerts = []string{"PrewarmDecisionsFailing", "PrewarmForecastSteppedBack", "PrewarmCapacityShort",
	"PrewarmCollectorStoreUnreachable", "PrewarmServiceDown"}

var metricName = regexp.MustCompile(`\bprewarm_[a-z_]+`)

// checkMetrics reports the prewarm_ metrics in expr outside the contract
// (recording rules, level:metric:ops, are checked against rules.yml).
func checkMetrics(t *testing.T, where, expr string) {
	t.Helper()
	for _, loc := range metricName.FindAllStringIndex(expr, -1) {
		m := expr[loc[0]:loc[1]]
		if loc[0] > 0 && expr[loc[0]-1] == ':' || loc[1] < len(expr) && expr[loc[1]] == ':' {
			continue // part of a recording rule's name
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
		if slices.Contains(contract, base) || slices.ContainsFunc(contract, func(c string) bool {
			return strings.HasSuffix(c, "_") && strings.HasPrefix(base, c)
		}) {
			continue
		}
		t.Errorf("%s: metric %s is not in the metric contract (docs/metrics.md)", where, m)
	}
}

// checkExprs parses PromQL expressions with promtool, as recording rules
// of a throw-away rule file; where[i] names exprs[i] in errors.
func checkExprs(t *testing.T, promtool string, where, exprs []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("groups:\n  - name: check\n    rules:\n")
	for i, e := range exprs {
		fmt.Fprintf(&b, "      - record: check:expr_%d\n        expr: %q\n", i, e)
	}
	file := filepath.Join(t.TempDir(), "exprs.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput()
	if err == nil {
		return
	}
	// Name the culprits: promtool reports "group "check", rule N, ...".
	for i, e := range exprs {
		if strings.Contains(string(out), fmt.Sprintf("rule %d,", i+1)) {
			t.Errorf("%s: invalid PromQL %q", where[i], e)
		}
	}
	t.Errorf("promtool check rules: %v\n%s", err, out)
}

// binaries builds forecaster and collector once, as the Dockerfile does
// (forecaster with CGO_ENABLED=0, collector with cgo), into a temp dir.
var binaries = struct {
	once sync.Once
	dir  string
	err  error
}{}

func buildBinaries(t *testing.T) (forecaster, collector string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	binaries.once.Do(func() {
		dir, err := os.MkdirTemp("", "prewarm-deploy-bin")
		if err != nil {
			binaries.err = err
			return
		}
		binaries.dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		for _, b := range []struct{ name, cgo string }{{"forecaster", "0"}, {"collector", "1"}} {
			cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, b.name), "./cmd/"+b.name)
			cmd.Dir = ".."
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
			if out, err := cmd.CombinedOutput(); err != nil {
				binaries.err = fmt.Errorf("go build ./cmd/%s (CGO_ENABLED=%s): %v\n%s", b.name, b.cgo, err, out)
				return
			}
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return filepath.Join(binaries.dir, "forecaster"), filepath.Join(binaries.dir, "collector")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// helpText runs a binary's --help and returns what it printed.
func helpText(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, append(args, "--help")...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run() // --help may exit 0 or 2; the text is what matters
	return out.String()
}

// flagsIn returns the --flags of a command line (without values).
func flagsIn(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			out = append(out, name)
		}
	}
	return out
}

// internalHost reports whether host is loopback or cluster-internal: the
// only addresses deploy/ may name.
func internalHost(host string) bool {
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".svc") || strings.HasSuffix(host, ".svc.cluster.local") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

var urlPattern = regexp.MustCompile(`\bhttps?://[^\s"'<>{}\x60]+`)

// documentation are the public pages deploy/ may link to.
var documentation = []string{"github.com", "prometheus.io", "grafana.com"}

// checkAddresses reports URLs in text whose host is neither internal nor
// a documentation page.
func checkAddresses(t *testing.T, where, text string) {
	t.Helper()
	for _, raw := range urlPattern.FindAllString(text, -1) {
		u, err := url.Parse(strings.TrimRight(raw, ".,;)"))
		if err != nil {
			t.Errorf("%s: unparsable URL %q", where, raw)
			continue
		}
		if !internalHost(u.Hostname()) && !slices.Contains(documentation, u.Hostname()) {
			t.Errorf("%s: %s is neither loopback nor cluster-internal", where, raw)
		}
	}
}

// checkListen reports a listen address (host:port) that is not internal.
func checkListen(t *testing.T, where, addr string) {
	t.Helper()
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("%s: listen address %q: %v", where, addr, err)
		return
	}
	if !internalHost(host) {
		t.Errorf("%s: listen address %q is not loopback or pod-internal", where, addr)
	}
}

// TestAddresses scans every file under deploy/ for URLs.
func TestAddresses(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checkAddresses(t, path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
