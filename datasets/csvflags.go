package datasets

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// CSVFlags are how every command that reads a demand file chooses its
// column and treats bad rows and outliers: one set of flags and one loader
// (LoadCSVTelling), so that backtest, plan, report, fit and import report
// the same repairs the same way.
type CSVFlags struct {
	ValueColumn   string
	SkipBad       bool
	AllowOutliers bool
}

// Register adds --value-column, --skip-bad and --allow-outliers to fs.
func (f *CSVFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.ValueColumn, "value-column", "", "column holding the demand (default: the only value column)")
	fs.BoolVar(&f.SkipBad, "skip-bad", false, "skip (and list) bad rows instead of failing")
	fs.BoolVar(&f.AllowOutliers, "allow-outliers", false, fmt.Sprintf(
		"keep (and list) values above %g or %d× the file's median, which are refused as typing errors by default",
		MaxValue, MaxMedianRatio))
}

// Options returns the loader's options for these flags.
func (f CSVFlags) Options() CSVOptions {
	return CSVOptions{ValueColumn: f.ValueColumn, SkipBad: f.SkipBad, AllowOutliers: f.AllowOutliers}
}

// LoadCSVTelling reads path with opts and tells w what it found: the bad
// rows (the first MaxListedBadRows) when it refuses the file, and every
// repair it made otherwise (duplicates merged, rows re-ordered, gaps
// filled, rows skipped, outliers kept, as Report.Notice), so that nothing
// changes silently. program names the command in the notice, e.g.
// "forecaster backtest".
func LoadCSVTelling(w io.Writer, program, path string, opts CSVOptions) (Series, error) {
	s, rep, err := LoadCSVReport(path, opts)
	if err != nil {
		return s, ListBadRows(w, err, path)
	}
	fmt.Fprint(w, rep.Notice(program))
	return s, nil
}
