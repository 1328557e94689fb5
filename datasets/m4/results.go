package m4

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Result is one method's official score on a subset of M4, as the
// competition published it.
type Result struct {
	// ID is the entry's number or the benchmark's name ("sNaive").
	ID    string
	Team  string
	SMAPE float64
	MASE  float64
	OWA   float64
}

// LoadResults reads the official results table (m4-hourly-point-results.csv:
// id,team,hourly_sMAPE,hourly_MASE,hourly_OWA,...).
func LoadResults(path string) ([]Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open M4 results: %w", err)
	}
	defer f.Close()
	res, err := ReadResults(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// ReadResults parses the results table from r; errors name the line.
func ReadResults(r io.Reader) ([]Result, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%w: empty results file", ErrFormat)
		}
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	need := []string{"id", "team", "hourly_sMAPE", "hourly_MASE", "hourly_OWA"}
	for _, name := range need {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("%w: line 1: no %q column", ErrFormat, name)
		}
	}
	var out []Result
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		line, _ := cr.FieldPos(0)
		res := Result{}
		var nums [3]float64
		for i, name := range need {
			idx := col[name]
			if idx >= len(rec) {
				return nil, fmt.Errorf("%w: line %d: no %s value", ErrFormat, line, name)
			}
			switch i {
			case 0:
				res.ID = rec[idx]
			case 1:
				res.Team = rec[idx]
			default:
				v, err := strconv.ParseFloat(strings.TrimSpace(rec[idx]), 64)
				if err != nil {
					return nil, fmt.Errorf("%w: line %d: %s %q is not a number", ErrFormat, line, name, rec[idx])
				}
				nums[i-2] = v
			}
		}
		res.SMAPE, res.MASE, res.OWA = nums[0], nums[1], nums[2]
		out = append(out, res)
	}
}
