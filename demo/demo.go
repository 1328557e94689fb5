package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/actuator/simulated"
	"github.com/prewarm/prewarm/backtest"
	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/demo/live"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/service"
	"github.com/prewarm/prewarm/store"
	"github.com/prewarm/prewarm/store/embedded"
	"github.com/prewarm/prewarm/store/open"
)

// Options configure a demo run; the zero value is the documented default.
type Options struct {
	// StorePath is the embedded store file; "" uses a temporary file that
	// is removed afterwards.
	StorePath string
	// HistoryDays of synthetic demand are written before the live replay
	// (default 28: four weeks, enough for the weekly season twice over;
	// live.MinHistoryDays to live.MaxHistoryDays).
	HistoryDays int
	// LiveHours are replayed minute by minute through the service
	// (default 24).
	LiveHours int
	// Seed makes the synthetic demand reproducible (default 1).
	Seed uint64
	// BootDelay is the instances' boot + model-load time (default 10m).
	BootDelay time.Duration
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
}

const (
	poolName    = "demo"
	measurement = poolspec.DefaultDemandMeasurement
	step        = time.Minute
)

// Run executes the demo and writes its report to w.
func Run(ctx context.Context, opts Options, w io.Writer) error {
	opts = withDefaults(opts)
	start := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC) // a Monday
	gen := datasets.DefaultSynthetic()
	gen.Seed = opts.Seed
	total := (opts.HistoryDays*24 + opts.LiveHours) * 60
	demand := gen.Generate(start, step, total)
	peak := 0.0
	for _, v := range demand.Values {
		peak = math.Max(peak, v)
	}
	rpsPerInstance := math.Ceil(peak / 20) // the static peak needs ~20 instances

	db, cleanup, err := openStore(ctx, opts.StorePath)
	if err != nil {
		return err
	}
	defer cleanup()
	history := opts.HistoryDays * 24 * 60
	if err := writeDemand(ctx, db, demand, 0, history); err != nil {
		return err
	}
	fmt.Fprintf(w, "prewarm demo: %d days of synthetic demand (peak %.0f req/s) in the embedded store; "+
		"one instance serves %.0f req/s, boots in %v.\n", opts.HistoryDays, peak, rpsPerInstance, opts.BootDelay)
	fmt.Fprintf(w, "Replaying the next %d hours minute by minute through the scaling service on a simulated fleet.\n\n", opts.LiveHours)

	live, err := replay(ctx, opts, db, demand, history, rpsPerInstance, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLive replay: %.1f GPU-hours (static peak fleet: %.1f), %d under-provisioned minutes of %d.\n\n",
		live.gpuHours, math.Ceil(peak/rpsPerInstance)*float64(opts.LiveHours), live.underMinutes, opts.LiveHours*60)
	return compare(ctx, demand, rpsPerInstance, opts.BootDelay, w)
}

func withDefaults(o Options) Options {
	if o.HistoryDays <= 0 {
		o.HistoryDays = live.DefaultHistoryDays
	}
	if o.LiveHours <= 0 {
		o.LiveHours = 24
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.BootDelay <= 0 {
		o.BootDelay = planner.DefaultConfig().Fleet.BootDelay
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

func openStore(ctx context.Context, path string) (store.Store, func(), error) {
	remove := func() {}
	if path == "" {
		dir, err := os.MkdirTemp("", "prewarm-demo-")
		if err != nil {
			return nil, nil, fmt.Errorf("creating a temporary store: %w", err)
		}
		path = filepath.Join(dir, "prewarm.db")
		remove = func() { os.RemoveAll(dir) }
	}
	db, err := open.EmbeddedFile(path).Open(ctx, open.Options{Embedded: embedded.Options{NoSync: true}})
	if err != nil {
		remove()
		return nil, nil, fmt.Errorf("opening the embedded store %s: %w", path, err)
	}
	return db, func() { db.Close(); remove() }, nil
}

// writeDemand writes demand.Values[from:to] as the pool's request rate.
func writeDemand(ctx context.Context, db store.Writer, demand datasets.Series, from, to int) error {
	const batch = 10000
	points := make([]store.Point, 0, batch)
	for i := from; i < to; i++ {
		points = append(points, store.Point{Measurement: measurement, Tags: map[string]string{"pool": poolName},
			Value: demand.Values[i], Time: demand.Time(i)})
		if len(points) == batch || i == to-1 {
			if err := db.Write(ctx, points); err != nil {
				return fmt.Errorf("writing demand to the store: %w", err)
			}
			points = points[:0]
		}
	}
	return nil
}

type liveStats struct {
	gpuHours     float64
	underMinutes int
}

// replay drives the real service minute by minute on a simulated clock,
// writing each minute's demand first as the collector would.
func replay(ctx context.Context, opts Options, db store.Store, demand datasets.Series, from int, rpsPerInstance float64, w io.Writer) (liveStats, error) {
	clock := demand.Time(from)
	now := func() time.Time { return clock }
	fleet := simulated.New(simulated.Options{Now: now, BootDelay: opts.BootDelay})
	fleet.AddPool(poolName, 4, 1, 40)
	cfg := poolspec.DefaultFile()
	cfg.Interval = step
	pool := poolspec.DefaultPool()
	pool.Name, pool.Backend, pool.Mode, pool.Fleet.MinInstances, pool.Fleet.MaxInstances, pool.Fleet.MaxStep = poolName, simulated.Name, poolspec.ModeActive, 1, 40, 8
	pool.Demand = poolspec.SeriesRef{Measurement: measurement, Match: map[string]string{"pool": poolName}}
	pool.Fleet.RPSPerInstance, pool.Fleet.BootDelay = rpsPerInstance, opts.BootDelay
	cfg.Pools = []poolspec.Pool{pool}
	svc, err := service.New(ctx, &cfg, service.Deps{Store: db,
		Backend: func(context.Context, actuator.PoolConfig) (actuator.Actuator, error) { return fleet, nil },
		Now:     now, Logger: opts.Logger})
	if err != nil {
		return liveStats{}, err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "time (UTC)\tdemand req/s\tready\tdesired\tgate\treason")
	var st liveStats
	for i := from; i < demand.Len(); i++ {
		clock = demand.Time(i).Add(step) // the minute has passed; its demand is known
		if err := writeDemand(ctx, db, demand, i, i+1); err != nil {
			return st, err
		}
		if err := svc.Tick(ctx); err != nil {
			return st, err
		}
		ready := fleet.Ready(poolName)
		capa, _ := fleet.Capacity(ctx, poolName)
		st.gpuHours += float64(capa.Current) / 60
		if demand.Values[i] > float64(ready)*rpsPerInstance {
			st.underMinutes++
		}
		if (i-from)%60 == 0 {
			p := svc.Status()[0]
			fmt.Fprintf(tw, "%s\t%.0f\t%d\t%d\t%s\t%s\n", clock.Format("Mon 15:04"), demand.Values[i], ready,
				p.Desired, p.Gate, shorten(p.Reason, 70))
		}
	}
	return st, tw.Flush()
}

// compare backtests every policy on the same demand and prints the table,
// each sized as a pool's defaults size the live replay's (an Erlang-C
// queue).
func compare(ctx context.Context, demand datasets.Series, rpsPerInstance float64, boot time.Duration, w io.Writer) error {
	pool := poolspec.DefaultPool()
	pool.Fleet.RPSPerInstance, pool.Fleet.BootDelay, pool.Fleet.MaxInstances = rpsPerInstance, boot, 40
	cfg := backtest.DefaultConfig()
	var err error
	if cfg.Planner, err = pool.Planner(); err != nil {
		return err
	}
	rep, err := backtest.Run(ctx, backtest.Trace{Name: "synthetic", Start: demand.Start, Step: demand.Step, RPS: demand.Values}, cfg)
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	fmt.Fprintf(w, "Backtest of every policy on the same %d days (walk-forward, refit every %v):\n",
		int(demand.End().Sub(demand.Start).Hours()/24), rep.RefitEvery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tGPU-hours\tcost\tvs static\tSLO met\tP99 wait s\tunder-prov. min\tactions\t")
	for _, r := range rep.Policies {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f%%\t%.2f%%\t%.1f\t%.0f\t%d\t\n", r.Name, r.GPUHours, r.Cost,
			100*r.CostVsStatic, 100*r.SLOAttainment, r.P99WaitS, r.UnderprovisionedMinutes, r.Actions)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, versusBaseline(rep.Policies, cfg.Planner.SLO.Quantile))
	return nil
}

// versusBaseline says what the hybrid costs against the baseline without
// a forecast: the cheaper of the reactive fleet and the best flat size
// that met the SLO target on the same demand (the one closer to it when
// neither did). "vs static" compares with a fleet held at the peak all
// day, the easiest baseline there is, so it is never the saving claimed.
func versusBaseline(results []backtest.Result, target float64) string {
	hybrid, base, ok := backtest.HybridAndBaseline(results, target)
	if !ok {
		return "No saving figure: the backtest lacks the hybrid, reactive or flat policy, or the baseline cost nothing."
	}
	verdict := fmt.Sprintf("%.0f%% below", 100*(1-hybrid.Cost/base.Cost))
	if hybrid.Cost >= base.Cost {
		verdict = fmt.Sprintf("%.0f%% above", 100*(hybrid.Cost/base.Cost-1))
	}
	return fmt.Sprintf("\nHybrid: %s the baseline, %s (cost %.0f, %.2f%% of requests within the SLO): the cheaper of\n"+
		"reactive and the best flat fleet at the %.1f%% SLO target, both replayed on the same demand. The hybrid met %.2f%%.\n"+
		"\"vs static\" is against a fleet held at the peak all day, for reference only.",
		verdict, base.Name, base.Cost, 100*base.SLOAttainment, 100*target, 100*hybrid.SLOAttainment)
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
