package m4

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Series is one M4 series: its id, the history a method may see, and the
// values that follow it, against which forecasts are scored.
type Series struct {
	ID    string
	Train []float64
	Test  []float64
}

// File names of the Hourly subset inside its folder.
const (
	HourlyTrain   = "Hourly-train.csv"
	HourlyTest    = "Hourly-test.csv"
	HourlyResults = "m4-hourly-point-results.csv"
)

// Hourly facts of the competition: forecast horizon and seasonal period.
const (
	HourlyHorizon = 48
	HourlyPeriod  = 24
)

// LoadHourly reads Hourly-train.csv and Hourly-test.csv from dir and pairs
// the rows by id, in the training file's order.
func LoadHourly(dir string) ([]Series, error) {
	return Load(filepath.Join(dir, HourlyTrain), filepath.Join(dir, HourlyTest))
}

// Load reads an M4 training file and its test file and pairs the rows by
// id, in the training file's order. Every training series must have test
// values and vice versa.
func Load(trainPath, testPath string) ([]Series, error) {
	train, err := readFile(trainPath)
	if err != nil {
		return nil, err
	}
	test, err := readFile(testPath)
	if err != nil {
		return nil, err
	}
	byID := make(map[string][]float64, len(test))
	for _, r := range test {
		byID[r.ID] = r.Values
	}
	out := make([]Series, 0, len(train))
	for _, r := range train {
		t, ok := byID[r.ID]
		if !ok {
			return nil, fmt.Errorf("%s: series %q has no row in %s", trainPath, r.ID, testPath)
		}
		delete(byID, r.ID)
		out = append(out, Series{ID: r.ID, Train: r.Values, Test: t})
	}
	for id := range byID {
		return nil, fmt.Errorf("%s: series %q has no row in %s", testPath, id, trainPath)
	}
	return out, nil
}

func readFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open M4 data: %w", err)
	}
	defer f.Close()
	rows, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// Row is one series of a wide file: its id and its values.
type Row struct {
	ID     string
	Values []float64
}

// ErrFormat marks a malformed M4 file; the wrapping error names the line.
var ErrFormat = errors.New("malformed M4 file")

// Read parses the wide M4 format from r: a header line ("V1","V2",...),
// then one series per line, the id first and the values after it, a series
// ending at its first empty or NA cell (every later cell must be empty too).
// Errors name the line and column.
func Read(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty file, want a header line", ErrFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if len(header) < 2 {
		return nil, fmt.Errorf("%w: line 1: header has %d columns, want the id and at least one value", ErrFormat, len(header))
	}
	var rows []Row
	seen := make(map[string]int)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFormat, err)
		}
		line, _ := cr.FieldPos(0)
		r, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
		}
		if prev, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("%w: line %d: series %q already on line %d", ErrFormat, line, r.ID, prev)
		}
		seen[r.ID] = line
		rows = append(rows, r)
	}
}

func parseRow(rec []string) (Row, error) {
	id := strings.TrimSpace(rec[0])
	if id == "" {
		return Row{}, errors.New("column 1: empty series id")
	}
	values := make([]float64, 0, len(rec)-1)
	ended := false
	for i, cell := range rec[1:] {
		cell = strings.TrimSpace(cell)
		if cell == "" || cell == "NA" {
			ended = true
			continue
		}
		if ended {
			return Row{}, fmt.Errorf("column %d: value %q after the series ended", i+2, cell)
		}
		v, err := strconv.ParseFloat(cell, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Row{}, fmt.Errorf("column %d: %q is not a finite number", i+2, cell)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return Row{}, fmt.Errorf("series %q has no values", id)
	}
	return Row{ID: id, Values: values}, nil
}
