package poolspec

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/prewarm/prewarm/control"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/store"
)

// The bounds of the file's own settings and of the forecast grid; the
// planner's settings have theirs in planner.Config.CheckRanges, the
// tuner's in tune.Options.CheckRanges. Every
// number a user can type has a range: the lower ends keep the service
// from spinning or the forecast from allocating without bound (a 1ns step
// would ask for gigabytes), the upper ends catch a unit typed wrong.
const (
	minInterval, maxInterval = time.Second, time.Hour
	maxWorkers               = 256
	maxDay                   = 24 * time.Hour
	minStep, maxStep         = control.MinForecastStep, control.MaxForecastStep
	// maxSteps bounds history/step, horizon/step and period/step: the
	// length of the series a refit allocates and fits.
	maxSteps   = control.MaxSteps
	maxPeriods = 4 // Holt-Winters' most seasonal periods
)

// poolName is what a pool may be called: it is a store tag value, a URL
// path segment of the API (/api/v1/pools/NAME/mode) and a back-end's
// resource name.
var poolName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// checker collects problems by YAML path.
type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) ints(path string, v, lo, hi int) {
	if v < lo || v > hi {
		c.add(path, "%d is out of range: want %d to %d", v, lo, hi)
	}
}

func (c *checker) durations(path string, v, lo, hi time.Duration) {
	switch {
	case v < 0 && lo == 0:
		c.add(path, "%s must not be negative", short(v))
	case v < lo:
		c.add(path, "%s is too short: at least %s", short(v), short(lo))
	case v > hi:
		c.add(path, "%s is too long: at most %s", short(v), short(hi))
	}
}

// short renders a duration as the file may write it: 1m, 2d, 4w (Go's
// 1m0s, 48h0m0s for whole milliseconds and more; Go's otherwise).
func short(d time.Duration) string {
	if d < 0 {
		return "-" + short(-d)
	}
	if d > 0 && d%time.Millisecond == 0 {
		return model.Duration(d).String()
	}
	return d.String()
}

// ranges checks a type's range table (planner.RangeChecker) with the
// file's messages, each at its key under at.
type ranges struct {
	c  *checker
	at func(string) string
}

func (r ranges) Int(x planner.Range[int]) { r.c.ints(r.at(x.Key), x.Value, x.Lo, x.Hi) }

func (r ranges) Float(x planner.Range[float64]) {
	if !x.Contains() {
		r.c.add(r.at(x.Key), "%v is out of range: want %s", x.Value, x.Want())
	}
}

func (r ranges) Duration(x planner.Range[time.Duration]) {
	path := r.at(x.Key)
	switch {
	case x.Contains():
	case x.Value > x.Hi && x.HiKey != "":
		r.c.add(path, "%s is too long: %s %s %s", short(x.Value), atMost(x.HiOpen), x.HiKey, short(x.Hi))
	case x.HiOpen && x.Value == x.Hi:
		r.c.add(path, "%s is too long: want less than %s", short(x.Value), strings.TrimSpace(x.HiKey+" "+short(x.Hi)))
	case x.NegativeOff && x.Value < x.Lo:
		r.c.add(path, "%s is too short: at least %s, or negative for none", short(x.Value), short(x.Lo))
	default:
		r.c.durations(path, x.Value, x.Lo, x.Hi)
	}
}

// atMost words an upper bound: "less than" when it is open.
func atMost(open bool) string {
	if open {
		return "less than"
	}
	return "at most"
}

// check returns every problem of f.
func (f *File) check(backends Backends) []Problem {
	c := &checker{}
	c.durations("interval", f.Interval, minInterval, maxInterval)
	c.ints("workers", f.Workers, 1, maxWorkers)
	if _, _, err := net.SplitHostPort(f.Listen); err != nil {
		c.add("listen", "%q is not HOST:PORT", f.Listen)
	}
	if f.Election != (Election{}) { // a File built in code may leave the block out
		f.Election.check(c)
	}
	if len(f.Pools) == 0 {
		c.add("pools", "at least one pool is required")
	}
	seen := map[string]int{}
	for i, p := range f.Pools {
		path := fmt.Sprintf("pools[%d]", i)
		if first, dup := seen[p.Name]; dup && p.Name != "" {
			c.add(path+".name", "%q is also the name of pools[%d]", p.Name, first)
		} else {
			seen[p.Name] = i
		}
		p.check(c, path, backends)
	}
	return c.problems
}

// Validate checks a pool built in code; the problems carry no line.
func (p Pool) Validate(backends Backends) error {
	c := &checker{}
	p.check(c, "", backends)
	if len(c.problems) > 0 {
		return Errors(c.problems)
	}
	return nil
}

func (p Pool) check(c *checker, path string, backends Backends) {
	p = p.withDefaultDemand()
	at := func(key string) string { return join(path, key) }
	if !poolName.MatchString(p.Name) {
		c.add(at("name"), "%q is not a pool name: letters, digits, '.', '_' and '-', starting with a letter or digit", p.Name)
	}
	p.checkBackend(c, at, backends)
	if !p.Mode.Valid() {
		c.add(at("mode"), "%q is not a mode: want %s", p.Mode, modeList())
	}
	p.Config.CheckRanges(ranges{c, at})
	if err := planner.CheckCurrency(p.Prices.Currency); err != nil {
		c.add(at("prices.currency"), "%v", err)
	}
	if err := planner.CheckSpotFallback(p.Fleet.Spot.Fallback); err != nil {
		c.add(at("spot.fallback"), "%v", err)
	}
	p.Tune.WithDefaults().CheckRanges(ranges{c, at})
	p.Demand.check(c, at("demand"))
	if p.Utilisation != nil {
		p.Utilisation.check(c, at("utilisation"))
	}
	if p.Queue != nil {
		p.Queue.check(c, at("queue"))
	}
	p.checkSizing(c, at)
	if _, err := p.Location(); err != nil {
		c.add(at("time_zone"), "%v", err)
	} else if _, err := planner.ParseWindows(p.Windows, time.UTC); err != nil {
		c.add(at("windows"), "%v", err)
	}
	checkForecast(c, at("forecast"), p.Forecast)
	g := p.Gating
	c.durations(at("gate.window"), g.Window, max(p.Forecast.Step, minStep), 90*maxDay)
}

func (p Pool) checkBackend(c *checker, at func(string) string, backends Backends) {
	if p.Backend == "" {
		c.add(at("backend"), "is required")
		return
	}
	if backends == nil {
		return
	}
	options, ok := backends[p.Backend]
	if !ok {
		c.add(at("backend"), "%q is not a back-end (known: %s)", p.Backend, strings.Join(slices.Sorted(maps.Keys(backends)), ", "))
		return
	}
	_, problems := options.Decode(p.Actuator())
	for _, o := range problems {
		c.add(at("options."+o.Key), "%s", o.Msg)
	}
}

func (p Pool) checkSizing(c *checker, at func(string) string) {
	switch p.Sizing {
	case planner.SizingUtilisation, planner.SizingErlangC:
		if p.Fleet.RPSPerInstance == 0 && p.Fleet.ServiceTime == 0 {
			c.add(at("rps_per_instance"), "is required for %s sizing (or set service_time and slots)", p.Sizing)
		}
	default:
		c.add(at("sizing"), "%q is not a sizing: want %s or %s", p.Sizing, planner.SizingUtilisation, planner.SizingErlangC)
	}
}

func (r SeriesRef) check(c *checker, path string) {
	switch {
	case r.PromQL != "" && (r.Measurement != "" || len(r.Match) > 0):
		c.add(path+".promql", "set promql or measurement and match, not both")
	case r.PromQL == "" && r.Measurement == "":
		c.add(path+".measurement", "is required (or promql)")
	case r.PromQL == "":
		q := store.Query{Measurement: r.Measurement, Match: r.Match, Start: time.Unix(0, 0), End: time.Unix(1, 0)}
		if err := q.Validate(); err != nil {
			c.add(path+".match", "%s", strings.TrimPrefix(err.Error(), store.ErrInvalidQuery.Error()+": match: "))
		}
	}
	if r.Aggregate != "" && !r.Aggregate.Valid() {
		c.add(path+".aggregate", "%q is not one of mean, sum, max, min, last, count", r.Aggregate)
	}
}

func checkForecast(c *checker, path string, f control.Settings) {
	c.durations(path+".step", f.Step, minStep, maxStep)
	if f.Step < minStep || f.Step > maxStep {
		return // the rest is measured in steps
	}
	steps := func(key string, d time.Duration, lo int) {
		switch n := d / f.Step; {
		case d < time.Duration(lo)*f.Step:
			c.add(path+"."+key, "%s is too short: at least %d × forecast.step (%s)", short(d), lo, short(time.Duration(lo)*f.Step))
		case n > maxSteps:
			c.add(path+"."+key, "%s is %d forecast steps of %s: at most %d", short(d), n, short(f.Step), maxSteps)
		}
	}
	steps("history", f.History, 2)
	steps("horizon", f.Horizon, 1)
	steps("refit_every", f.RefitEvery, 1)
	if f.RefitEvery%f.Step != 0 {
		c.add(path+".refit_every", "%s is not a multiple of forecast.step %s (refits happen on the step grid)", short(f.RefitEvery), short(f.Step))
	}
	if f.RefitEvery > control.MaxRefitEvery {
		c.add(path+".refit_every", "%s is too long: at most %s", short(f.RefitEvery), short(control.MaxRefitEvery))
	}
	if len(f.Periods) > maxPeriods {
		c.add(path+".periods", "%d periods: at most %d", len(f.Periods), maxPeriods)
	}
	for i, p := range f.Periods {
		pp := fmt.Sprintf("%s.periods[%d]", path, i)
		switch {
		case p <= f.Step || p%f.Step != 0:
			c.add(pp, "%s must be a multiple of forecast.step %s and longer than it", short(p), short(f.Step))
		case p/f.Step > maxSteps:
			c.add(pp, "%s is %d forecast steps: at most %d", short(p), p/f.Step, maxSteps)
		}
	}
}

func modeList() string {
	names := make([]string, len(Modes()))
	for i, m := range Modes() {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
