package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/prewarm/prewarm/datasets"
)

// csvFlags are how every command that reads a demand file chooses its
// column and treats bad rows and outliers: one set of flags and one loader,
// so that backtest, plan, report, fit and import report the same repairs
// the same way.
type csvFlags struct {
	valueColumn   string
	skipBad       bool
	allowOutliers bool
}

// register adds --value-column, --skip-bad and --allow-outliers.
func (f *csvFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.valueColumn, "value-column", "", "column holding the demand (default: the only value column)")
	fs.BoolVar(&f.skipBad, "skip-bad", false, "skip (and list) bad rows instead of failing")
	fs.BoolVar(&f.allowOutliers, "allow-outliers", false, fmt.Sprintf(
		"keep (and list) values above %g or %d× the file's median, which are refused as typing errors by default",
		datasets.MaxValue, datasets.MaxMedianRatio))
}

// options returns the loader's options for these flags.
func (f *csvFlags) options() datasets.CSVOptions {
	return datasets.CSVOptions{ValueColumn: f.valueColumn, SkipBad: f.skipBad, AllowOutliers: f.allowOutliers}
}

// loadDemandCSV reads path with opts. Bad rows are listed on stderr (the
// first maxListedBadRows); every repair the loader made (duplicates merged,
// rows re-ordered, gaps filled, rows skipped, outliers kept) is printed as
// the report's Notice, so nothing changes silently. program names the
// command, e.g. "forecaster backtest".
func loadDemandCSV(program, path string, opts datasets.CSVOptions, stderr io.Writer) (datasets.Series, error) {
	s, rep, err := datasets.LoadCSVReport(path, opts)
	if err != nil {
		return s, listBadRows(err, path, stderr)
	}
	fmt.Fprint(stderr, rep.Notice(program))
	return s, nil
}
