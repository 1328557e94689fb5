package traceeval

import (
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Reference is testdata/r_reference.csv: R forecast 8.20's scores on
// DefaultTraces' windows, written by testdata/r_reference.R (the file
// names its calls). Regenerate both after changing the traces or the
// windows:
//
//	forecaster eval traces --export-windows /tmp/windows.csv
//	Rscript datasets/traceeval/testdata/r_reference.R /tmp/windows.csv > datasets/traceeval/testdata/r_reference.csv
//
//go:embed testdata/r_reference.csv
var Reference string

// RefScore is one row of the reference: an R method's score of one
// window, with the window's size and checksum as R saw them.
type RefScore struct {
	Score
	// NTrain and TrainSum describe the history R forecast from.
	NTrain   int
	TrainSum float64
	// Failed is R's error message when the method could not be fitted
	// (the scores are then NaN).
	Failed string
}

// refHeader is the header R writes.
var refHeader = []string{"series", "origin", "method", "n_train", "train_sum", "mae", "cov80", "cov95", "is95", "seconds", "error"}

// ReadReference parses the reference CSV; name is used in errors.
func ReadReference(r io.Reader, name string) ([]RefScore, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(refHeader)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, h := range refHeader {
		if strings.TrimSpace(header[i]) != h {
			return nil, fmt.Errorf("%s:1: column %d is %q, want %q", name, i+1, header[i], h)
		}
	}
	var out []RefScore
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		var rs RefScore
		rs.Series, rs.Method, rs.Failed = rec[0], rec[2], rec[10]
		if rs.Origin, err = strconv.Atoi(rec[1]); err != nil {
			return nil, fmt.Errorf("%s:%d: origin %q is not an integer", name, line, rec[1])
		}
		if rs.NTrain, err = strconv.Atoi(rec[3]); err != nil {
			return nil, fmt.Errorf("%s:%d: n_train %q is not an integer", name, line, rec[3])
		}
		nums := []*float64{&rs.TrainSum, &rs.MAE, &rs.Cov80, &rs.Cov95, &rs.IS95, &rs.Seconds}
		for i, p := range nums {
			cell := strings.TrimSpace(rec[4+i])
			if cell == "NA" || cell == "" {
				*p = math.NaN()
				continue
			}
			if *p, err = strconv.ParseFloat(cell, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %s %q is not a number", name, line, refHeader[4+i], cell)
			}
		}
		out = append(out, rs)
	}
}

// Attach matches the reference rows to the windows: each row must name a
// window, with the same history length and checksum (relative 1e-9),
// and R's seasonal naive ("snaive") must reproduce the Go baseline's MAE
// on it (relative 1e-6), which proves both forecast the same numbers. It
// returns the rows as Scores (half, scale and fallback filled in from the
// window; a failed fit is dropped and counted in failed) for Summarise.
func Attach(ref []RefScore, windows []Window, baseline []Score) (scores []Score, failed map[string]int, err error) {
	type wkey struct {
		series string
		origin int
	}
	byKey := map[wkey]Window{}
	for _, w := range windows {
		byKey[wkey{w.Series, w.Origin}] = w
	}
	base := map[wkey]Score{}
	for _, s := range baseline {
		if s.Method == Baseline {
			base[wkey{s.Series, s.Origin}] = s
		}
	}
	failed = map[string]int{}
	matched := map[wkey]bool{}
	for _, r := range ref {
		k := wkey{r.Series, r.Origin}
		w, ok := byKey[k]
		if !ok {
			return nil, nil, fmt.Errorf("reference: %s origin %d is not a window of the traces evaluated (regenerate it, see Reference)", r.Series, r.Origin)
		}
		if r.NTrain != len(w.Train) || !near(r.TrainSum, TrainSum(w), 1e-9) {
			return nil, nil, fmt.Errorf("reference: %s origin %d: R saw %d values summing to %g, the window has %d summing to %g (regenerate it, see Reference)",
				r.Series, r.Origin, r.NTrain, r.TrainSum, len(w.Train), TrainSum(w))
		}
		if r.Method == "r_snaive" {
			matched[k] = true
			if b, ok := base[k]; ok && !near(r.MAE, b.MAE, 1e-6) {
				return nil, nil, fmt.Errorf("reference: %s origin %d: R's snaive MAE %g differs from the baseline's %g", r.Series, r.Origin, r.MAE, b.MAE)
			}
			continue
		}
		if r.Failed != "" || math.IsNaN(r.MAE) {
			failed[r.Method]++
			continue
		}
		s := r.Score
		s.Half, s.Scale = w.Half, scale(w.Train, w.Period)
		scores = append(scores, s)
	}
	for k := range byKey {
		if !matched[k] {
			return nil, nil, fmt.Errorf("reference: no R rows for %s origin %d (regenerate it, see Reference)", k.series, k.origin)
		}
	}
	return scores, failed, nil
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Max(math.Abs(a), math.Abs(b)), 1e-12)
}
