package poolspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/fleetsim"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/tune"
)

// File is the forecaster's configuration file: the service's settings and
// the pools it scales. See docs/forecaster.yaml for an annotated example.
type File struct {
	// Interval is the decision tick; each pool's decision must finish
	// within it (default 1m, 1s to 1h).
	Interval time.Duration `yaml:"interval"`
	// Listen is the HTTP address for /metrics and the API.
	Listen string `yaml:"listen"`
	// AuditLog is the actuators' JSON-lines audit file ("" = none).
	AuditLog string `yaml:"audit_log"`
	// StateFile is where each pool's state is kept across restarts; ""
	// means prewarm-state.db beside the audit log (see StatePath).
	StateFile string `yaml:"state_file"`
	// Workers bounds how many pools decide at once (default 8, 1 to 256).
	Workers int `yaml:"workers"`
	// Election shares the pools among several serve replicas (off by
	// default).
	Election Election `yaml:"election"`
	// Pools are the fleets the service scales.
	Pools []Pool `yaml:"pools"`
}

// Mode says what the service does with a pool's decisions.
type Mode string

// The modes of a pool.
const (
	// ModeForecastOnly reads the pool's real capacity and computes every
	// decision, and applies none: the default for a new pool, so a
	// configuration can be watched before it touches a fleet.
	ModeForecastOnly Mode = "forecast-only"
	// ModeActive applies the decisions through the pool's back-end.
	ModeActive Mode = "active"
	// ModePaused holds the pool where it is and says so; the forecast is
	// still refitted, so the plan is fresh when the pool is resumed.
	ModePaused Mode = "paused"
)

// Modes lists the modes, for messages: a new slice each call.
func Modes() []Mode { return []Mode{ModeForecastOnly, ModeActive, ModePaused} }

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return slices.Contains(Modes(), m) }

// Pool is one pool: where its demand is read, how it is sized and planned,
// how the reactive rules and the forecast gate behave, which back-end
// applies the decisions, within which limits, and in which mode. It is the
// one description of a pool that serve, backtest, plan and release read.
type Pool struct {
	// Name is the back-end's pool (scaling group ID, Deployment, KEDA
	// pool) and the `pool` tag of its series in the store.
	Name string `yaml:"name"`
	// Backend is the registered actuator: dryrun, simulated, keda,
	// kubescale, volcengine.
	Backend string `yaml:"backend"`
	// Mode is forecast-only (default), active or paused.
	Mode Mode `yaml:"mode"`
	// Options are the back-end's settings (Backends declares them).
	Options map[string]string `yaml:"options"`
	// PublishSchedule hands the plan's future steps to back-ends that can
	// act on them themselves (scheduled scaling policies).
	PublishSchedule bool `yaml:"publish_schedule"`
	// LearnBootDelay lets the pool plan with its measured start times
	// (from the size asked to an instance serving) instead of boot_delay,
	// once five starts were seen and they disagree with it by half:
	// serve's status shows both. Default true; false keeps boot_delay.
	LearnBootDelay bool `yaml:"learn_boot_delay"`

	// Demand is the series of the pool's request rate (requests/s);
	// default: service_request_rate{pool=NAME}, as the collector writes it.
	Demand SeriesRef `yaml:"demand"`
	// Utilisation is the series of GPU utilisation in percent (the
	// collector's gpu_util); unset: derived from demand and capacity.
	Utilisation *SeriesRef `yaml:"utilisation"`
	// Queue is the series of waiting requests; unset means 0.
	Queue *SeriesRef `yaml:"queue"`

	// Config is the fleet, its limits (min, max, max_step,
	// min_interval), sizing, SLO, prices, reactive rules and gate: the
	// planner's settings, each key declared, defaulted and documented on
	// its planner type. Its Windows are parsed from the pool's own
	// Windows text by Planner; max has no default in a pool.
	planner.Config `yaml:",inline"`
	// Windows are schedule floors, one per line, e.g.
	// "weekdays 09:45-12:00 at least 6", in TimeZone (an IANA name).
	Windows  string `yaml:"windows"`
	TimeZone string `yaml:"time_zone"`

	// Forecast is the forecast grid and its refits (control.Settings,
	// whose keys are the forecast: block's).
	Forecast control.Settings `yaml:"forecast"`
	// Tune sets how the pool chooses its policy walk-forward among the
	// candidates it replays (package tune).
	Tune tune.Options `yaml:"tune"`
}

// SeriesRef selects a series in the store: a measurement and the tags its
// series must carry, or a PromQL expression for a Prometheus store.
// Several matching series (tag sets) are summed, except utilisation, which
// is averaged.
type SeriesRef struct {
	Measurement string            `yaml:"measurement"`
	Match       map[string]string `yaml:"match"`
	// PromQL is a query in the store's own language; when set, Measurement
	// and Match are not.
	PromQL string `yaml:"promql"`
	// Aggregate folds each series' points within a window. Default: mean,
	// for the live signals of the last interval and for the demand
	// history a refit reads (the variation inside a forecast step is
	// learned from the live observations).
	Aggregate store.Aggregate `yaml:"aggregate"`
}

// Query returns the store query that reads the series over [start, end)
// in windows of step (0: raw points) folded by agg unless the reference
// sets its own aggregate.
func (r SeriesRef) Query(start, end time.Time, step time.Duration, agg store.Aggregate) store.Query {
	if r.Aggregate != "" {
		agg = r.Aggregate
	}
	return store.Query{Measurement: r.Measurement, Match: r.Match, Expr: r.PromQL,
		Start: start, End: end, Step: step, Aggregate: agg}
}

// String renders the reference as measurement{key=value,...} (or its PromQL)
// for messages.
func (r SeriesRef) String() string {
	if r.PromQL != "" {
		return r.PromQL
	}
	keys := slices.Sorted(maps.Keys(r.Match))
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + r.Match[k]
	}
	return r.Measurement + "{" + strings.Join(pairs, ",") + "}"
}

// DefaultDemandMeasurement is the series a pool's demand is read from when
// its config names none: the collector's request rate (req/s), tagged with
// the pool's name (see store/schema.go).
const DefaultDemandMeasurement = store.ServiceRequestRate

// DefaultFile returns the settings a file starts from.
func DefaultFile() File {
	return File{Interval: time.Minute, Listen: "127.0.0.1:9109", Workers: 8, Election: DefaultElection()}
}

// DefaultPool returns the settings every pool starts from: the planner's
// (planner.DefaultConfig) and the controller's (control.Settings'
// defaults), mode forecast-only, in UTC, but for two. A pool sizes by an
// Erlang-C queue (planner.SizingErlangC) that meets its SLO latency and
// quantile, as the fleet flags of backtest, plan and report do and as
// the figures of README.md and docs/scaling.md were measured; its service
// time, unless it gives one, follows from rps_per_instance and slots
// (Planner). And it has no max: each pool names its own ceiling. Name,
// Backend, Max and RPSPerInstance (or ServiceTime) have no default.
func DefaultPool() Pool {
	c := planner.DefaultConfig()
	c.Sizing = planner.SizingErlangC
	c.Fleet.MaxInstances = 0
	return Pool{
		Mode:     ModeForecastOnly,
		Config:   c,
		TimeZone: "UTC",
		Forecast: control.DefaultSettings(),
		Tune:     tune.Default(),

		LearnBootDelay: true,
	}
}

// setDefaults is called by the decoder on each pool before its keys.
func (p *Pool) setDefaults() { *p = DefaultPool() }

// Backends maps each back-end name to the options it declares: the table
// a binary also registers its back-ends with (actuator.Registry), so the
// spec and the registry agree. Parse refuses pools of other back-ends and
// options their declaration refuses (unknown keys, text of the wrong kind,
// values out of range, required options missing); a nil Backends checks
// neither (for tools that never build a back-end).
type Backends map[string]actuator.OptionSet

// Load reads and checks a configuration file.
func Load(path string, backends Backends) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(data, path, backends)
}

// Parse reads and checks YAML; source names it in errors. Every problem is
// reported (as Errors), each with its file, line and YAML path.
func Parse(data []byte, source string, backends Backends) (*File, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, Errors{syntaxProblem(source, err)}
	}
	f := DefaultFile()
	d := &decoder{lines: map[string]int{}, values: map[string]*yaml.Node{}}
	if len(root.Content) > 0 {
		d.decode(root.Content[0], reflect.ValueOf(&f).Elem(), "")
	}
	f.normalise()
	problems := d.problems
	// A key whose value did not decode has its default: do not also
	// report what the rules think of that default.
	for _, p := range f.check(backends) {
		if !slices.ContainsFunc(d.problems, func(q Problem) bool { return q.Path == p.Path }) {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		return &f, nil
	}
	for i := range problems {
		problems[i].Source = source
		if problems[i].Line == 0 {
			problems[i].Line = lineOf(d.lines, problems[i].Path)
		}
		windowLine(&problems[i], d.values)
	}
	slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
	return nil, Errors(problems)
}

// windowErr is a planner.ParseWindows error: "line 2, field 1 ...".
var windowErr = regexp.MustCompile(`^line (\d+), (.*)$`)

// windowLine points a windows problem at the file line of the window.
func windowLine(p *Problem, values map[string]*yaml.Node) {
	n, ok := values[p.Path]
	m := windowErr.FindStringSubmatch(p.Msg)
	if !ok || m == nil || !strings.HasSuffix(p.Path, ".windows") {
		return
	}
	i, _ := strconv.Atoi(m[1])
	p.Line, p.Msg = n.Line+i-1, fmt.Sprintf("window %d: %s", i, m[2])
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		p.Line++ // the block starts on the line after its '|'
	}
}

// syntaxLine finds the line in yaml.v3's syntax errors ("yaml: line 3: ...").
var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxProblem(source string, err error) Problem {
	if m := syntaxLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Source: source, Line: line, Msg: m[2]}
	}
	return Problem{Source: source, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

// Validate checks a File built in code (Parse already did); the problems
// carry no line.
func (f *File) Validate(backends Backends) error {
	if problems := f.check(backends); len(problems) > 0 {
		return Errors(problems)
	}
	return nil
}

// lineOf is the line of path's key, or of its closest ancestor's.
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if l, ok := lines[path]; ok {
			return l
		}
		i := max(strings.LastIndexByte(path, '.'), strings.LastIndexByte(path, '['))
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 1
}

// normalise fills what depends on other keys: each pool's default demand
// series is its own service_request_rate.
func (f *File) normalise() {
	for i := range f.Pools {
		f.Pools[i] = f.Pools[i].withDefaultDemand()
	}
}

// withDefaultDemand returns p reading the collector's request rate of the
// pool when it names no demand series.
func (p Pool) withDefaultDemand() Pool {
	if p.Demand.Measurement == "" && p.Demand.PromQL == "" {
		p.Demand.Measurement = DefaultDemandMeasurement
		if p.Demand.Match == nil {
			p.Demand.Match = map[string]string{store.TagPool: p.Name}
		}
	}
	return p
}

// Pool returns the pool named name; the error lists the pools there are.
func (f *File) Pool(name string) (Pool, error) {
	var names []string
	for _, p := range f.Pools {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Pool{}, fmt.Errorf("no pool %q in the configuration (pools: %s)", name, strings.Join(names, ", "))
}

// StatePath is the state file: state_file, or prewarm-state.db in the
// audit log's directory (the working directory without an audit log).
func (f *File) StatePath() string {
	if f.StateFile != "" {
		return f.StateFile
	}
	if f.AuditLog != "" {
		return filepath.Join(filepath.Dir(f.AuditLog), "prewarm-state.db")
	}
	return "prewarm-state.db"
}

// Location returns the pool's time zone.
func (p Pool) Location() (*time.Location, error) {
	if p.TimeZone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone (e.g. UTC, Asia/Shanghai): %w", p.TimeZone, err)
	}
	return loc, nil
}

// Planner returns the pool's planner configuration. Of rps_per_instance
// and service_time, the one the pool does not give follows from the other
// and slots (each slot serves one request per service time), as the fleet
// flags derive them from --gpu-rps or --service-time and --slots: Erlang-C
// sizing, the default, needs the service time. A pool from Parse never
// fails; one built in code may (its windows or time zone).
func (p Pool) Planner() (planner.Config, error) {
	c := p.Config
	c.Fleet.RPSPerInstance, c.Fleet.ServiceTime = c.Fleet.RPS(), c.Fleet.MeanServiceTime()
	loc, err := p.Location()
	if err != nil {
		return c, fmt.Errorf("time_zone: %w", err)
	}
	if c.Windows, err = planner.ParseWindows(p.Windows, loc); err != nil {
		return c, fmt.Errorf("windows: %w", err)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("pool %q: %w", p.Name, err)
	}
	return c, nil
}

// Settings returns the pool's controller settings (control.Settings).
func (p Pool) Settings() control.Settings {
	s := p.Forecast
	s.Periods = slices.Clone(s.Periods)
	return s
}

// Tuning returns the pool's tuner options, its twins deciding every
// interval (within the pool's limits, which the twins take with the
// planner configuration they replay). A twin sees the interval that just
// ended, as the service reads it: no lag beyond the interval.
func (p Pool) Tuning(interval time.Duration) tune.Options {
	o := p.Tune
	o.Sim = fleetsim.Options{Tick: interval, MetricsLag: -1}
	return o
}

// Actuator returns the pool's actuator configuration: its back-end, the
// limits actuator.Safe enforces and the back-end's options.
func (p Pool) Actuator() actuator.PoolConfig {
	return actuator.PoolConfig{Name: p.Name, Backend: p.Backend, Limits: p.Fleet.Limits, Options: maps.Clone(p.Options)}
}

// Equal reports whether two pools are configured identically, so a reload
// keeps what did not change.
func (p Pool) Equal(q Pool) bool { return reflect.DeepEqual(p, q) }
