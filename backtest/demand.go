package backtest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/prewarm/prewarm/datasets"
	"github.com/prewarm/prewarm/planner"
	"github.com/prewarm/prewarm/poolspec"
)

// The bounds of the demand a command replays, checked before it is
// allocated.
const (
	// MaxSyntheticDays is the most days of generated demand.
	MaxSyntheticDays = 366
	// MaxDemandStep is the coarsest step demand is resampled to.
	MaxDemandStep = 7 * 24 * time.Hour
	// maxTraceSteps bounds the steps of the demand after resampling (a
	// year per minute fits): every policy keeps a row per step.
	maxTraceSteps = 1_000_000
	// MaxSuiteFiles is the most demand files one suite replays.
	MaxSuiteFiles = 100
	// MaxSuiteSeeds is the most generator seeds one suite adds.
	MaxSuiteSeeds = 10
	// MinSuiteDays and DefaultSuiteDays bound and default the days of
	// each generated trace of a suite: enough for a weekly season and its
	// warm-up, eight weeks unless told.
	MinSuiteDays, DefaultSuiteDays = 4, 56
)

// syntheticStart is where generated demand begins: a Monday.
var syntheticStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Synthetic generates days of demand at step (0: a minute), with bursts
// or without (datasets.BurstySynthetic, datasets.DefaultSynthetic),
// refusing, as a poolspec.FlagError naming --synthetic-days, a length out
// of range or of more steps than a trace may hold.
func Synthetic(days int, step time.Duration, bursts bool) (Trace, error) {
	if step == 0 {
		step = time.Minute
	}
	if err := poolspec.CheckInt("--synthetic-days", days, 1, MaxSyntheticDays); err != nil {
		return Trace{}, err
	}
	n := int(time.Duration(days) * 24 * time.Hour / step)
	if n > maxTraceSteps {
		return Trace{}, poolspec.Flagf("--synthetic-days %d at --step %v is %d steps, more than %d: give fewer days or a coarser --step",
			days, step, n, maxTraceSteps)
	}
	gen, name := datasets.DefaultSynthetic(), "synthetic"
	if bursts {
		gen, name = datasets.BurstySynthetic(), "synthetic-bursts"
	}
	s := gen.Generate(syntheticStart, step, n)
	return Trace{Name: name, Start: s.Start, Step: s.Step, RPS: s.Values}, nil
}

// FromSeries is the trace of the demand file path read as s: counts per
// row turned into requests/s with counts. A series of more steps than a
// trace may hold, or mostly missing (step, the --step it was resampled
// to, finer than the file's), is refused.
func FromSeries(path string, s datasets.Series, counts bool, step time.Duration) (Trace, error) {
	if s.Len() > maxTraceSteps {
		return Trace{}, poolspec.Flagf("%s: %d steps at %v, more than %d: give a coarser --step", path, s.Len(), s.Step, maxTraceSteps)
	}
	if s.Len() > 0 && s.Missing()*2 > s.Len() {
		return Trace{}, fmt.Errorf("%s: %d of %d steps have no data; is --step %v finer than the file's own step?",
			path, s.Missing(), s.Len(), step)
	}
	if counts {
		s = s.PerSecond()
	}
	return Trace{Name: filepath.Base(path), Start: s.Start, Step: s.Step, RPS: s.Values}, nil
}

// SuiteInputs are the demand files and generated traces a policy suite
// replays (RunSuite, LeaveOneTraceOut).
type SuiteInputs struct {
	// Inputs are files, or folders whose CSVs are each read; none: the
	// SuiteFiles of Datasets/traces that exist.
	Inputs   []string
	Datasets string
	// Seeds add SuiteSynthetic's traces of Days each; seed 0 adds none.
	Seeds []uint
	Days  int
}

// Traces loads the suite's traces: every input (read by load), or the
// shared ones that exist (those missing are named on stderr), then the
// generated ones. Errors in the inputs are poolspec.FlagError naming
// --input.
func (s SuiteInputs) Traces(load func(path string) (Trace, error), stderr io.Writer) ([]Trace, error) {
	files, err := s.files(stderr)
	if err != nil {
		return nil, err
	}
	var traces []Trace
	for _, f := range files {
		tr, err := load(f)
		if err != nil {
			return nil, err
		}
		traces = append(traces, tr)
	}
	var seeds []uint64
	for _, seed := range s.Seeds {
		if seed != 0 {
			seeds = append(seeds, uint64(seed))
		}
	}
	traces = append(traces, SuiteSynthetic(seeds, s.Days)...)
	if len(traces) == 0 {
		return nil, poolspec.Flagf("no trace to replay: give --input, --datasets or --synthetic-seeds")
	}
	return traces, nil
}

// files lists the demand files of the inputs, or the shared ones.
func (s SuiteInputs) files(stderr io.Writer) ([]string, error) {
	var files []string
	for _, in := range s.Inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, poolspec.Flagf("--input %s: %v", in, err)
		}
		if !st.IsDir() {
			files = append(files, in)
			continue
		}
		csvs, _ := filepath.Glob(filepath.Join(in, "*.csv"))
		if len(csvs) == 0 {
			return nil, poolspec.Flagf("--input %s: no .csv file in the folder", in)
		}
		files = append(files, csvs...)
	}
	if len(s.Inputs) == 0 {
		for _, name := range SuiteFiles {
			path := filepath.Join(s.Datasets, "traces", name)
			if _, err := os.Stat(path); err != nil {
				fmt.Fprintf(stderr, "forecaster eval policy: %s not found, left out (--datasets names the shared datasets folder)\n", path)
				continue
			}
			files = append(files, path)
		}
	}
	if len(files) > MaxSuiteFiles {
		return nil, poolspec.Flagf("--input: %d files, at most %d", len(files), MaxSuiteFiles)
	}
	return files, nil
}

// SuiteCases are the suite's cases of traces: each at DefaultConfig with
// the planner configuration plan gives for it (an error names the trace),
// the tuner on when tuned is true.
func SuiteCases(traces []Trace, plan func(Trace) (planner.Config, error), tuned bool) ([]SuiteCase, error) {
	cases := make([]SuiteCase, len(traces))
	for i, tr := range traces {
		cfg := DefaultConfig()
		var err error
		if cfg.Planner, err = plan(tr); err != nil {
			return nil, fmt.Errorf("%s: %w", tr.Name, err)
		}
		cfg.Tune.Enabled = tuned
		cases[i] = SuiteCase{Trace: tr, Config: cfg}
	}
	return cases, nil
}
