package datasets

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// addTestdataSeeds adds every testdata CSV file to the fuzz corpus.
func addTestdataSeeds(f *testing.F, add func(data []byte)) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.csv"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

// checkSeries asserts what every accepted series must satisfy: a positive
// step, at least one value, values finite (and non-negative) or NaN, and a
// report whose counts add up.
func checkSeries(t *testing.T, s Series, rep Report) {
	t.Helper()
	if s.Step <= 0 || len(s.Values) == 0 {
		t.Fatalf("accepted series with step %v and %d values", s.Step, len(s.Values))
	}
	if !s.Time(len(s.Values)-1).After(s.Start) && len(s.Values) > 1 {
		t.Fatalf("series not time-ordered: start %v, last %v", s.Start, s.Time(len(s.Values)-1))
	}
	for i, v := range s.Values {
		if math.IsInf(v, 0) || v < 0 {
			t.Fatalf("value %d is %v", i, v)
		}
	}
	if rep.Rows-rep.Accepted != len(rep.Bad) {
		t.Fatalf("rows %d - accepted %d != %d bad rows", rep.Rows, rep.Accepted, len(rep.Bad))
	}
	nonNaN := len(s.Values) - s.Missing()
	if nonNaN == 0 || nonNaN > rep.Accepted {
		t.Fatalf("%d non-NaN values from %d accepted rows", nonNaN, rep.Accepted)
	}
	if rep.Missing != s.Missing() {
		t.Fatalf("report says %d missing, series has %d NaN", rep.Missing, s.Missing())
	}
}

// FuzzReadCSV feeds arbitrary bytes and options to ReadCSV: it must never
// panic; any series it accepts must be time-ordered with finite or NaN
// values, none absurd (MaxValue) unless AllowOutliers kept and listed it;
// and every error is printable text (no raw bytes of the file) naming no
// Go field.
//
//	go test -run='^$' -fuzz=FuzzReadCSV -fuzztime=20s ./datasets
func FuzzReadCSV(f *testing.F) {
	addTestdataSeeds(f, func(data []byte) { f.Add(data, int64(0), uint8(0)) })
	f.Add([]byte("t,v\n0,1\n5,2\n3,3\n3,4\n"), int64(0), uint8(3))
	f.Add([]byte("t,v\n1662858720,1\n1662858777.5,2\n"), int64(time.Minute), uint8(1))
	f.Add([]byte(series24(4, "1e300")), int64(0), uint8(4))
	f.Add([]byte(series24(9, "99999")), int64(0), uint8(0))
	f.Add([]byte(strings.ReplaceAll(hourly, ",", ";")), int64(0), uint8(0))
	f.Add(utf16Bytes(hourly, binary.LittleEndian, false), int64(0), uint8(0))
	f.Add(append(append([]byte(nil), utf8BOM...), hourly...), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, step int64, flags uint8) {
		opts := CSVOptions{
			Step:          time.Duration(step),
			SkipBad:       flags&1 != 0,
			Counts:        flags&2 != 0,
			AllowOutliers: flags&4 != 0,
		}
		if opts.Step < 0 {
			opts.Step = -opts.Step
		}
		if opts.Step < 0 { // math.MinInt64
			opts.Step = 0
		}
		s, rep, err := ReadCSV(bytes.NewReader(data), "fuzz.csv", opts)
		if err != nil {
			checkMessage(t, err.Error())
			return
		}
		checkSeries(t, s, rep)
		if !opts.SkipBad && len(rep.Bad) > 0 {
			t.Fatalf("accepted a file with %d bad rows without SkipBad", len(rep.Bad))
		}
		if !opts.AllowOutliers && len(rep.Outliers) > 0 {
			t.Fatalf("listed %d outliers without AllowOutliers", len(rep.Outliers))
		}
		for i, v := range s.Values {
			if v > MaxValue && !opts.AllowOutliers && !opts.Counts && opts.Aggregate != AggregateSum {
				t.Fatalf("value %d is %g, above MaxValue, without AllowOutliers", i, v)
			}
		}
		checkMessage(t, rep.Notice("forecaster fuzz"))
	})
}

// checkMessage asserts that a message is printable text naming no Go
// field of the options.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	if !printable(msg) {
		t.Fatalf("message with raw bytes: %q", msg)
	}
	for _, field := range []string{"ValueColumn", "SkipBad", "TimeColumn", "AllowOutliers", "SumColumn"} {
		if strings.Contains(msg, field) {
			t.Fatalf("message names the Go field %s: %s", field, msg)
		}
	}
}

// FuzzReadArrivals does the same for per-request logs; a count series has
// no NaN and its total is the number of accepted rows.
//
//	go test -run='^$' -fuzz=FuzzReadArrivals -fuzztime=20s ./datasets
func FuzzReadArrivals(f *testing.F) {
	addTestdataSeeds(f, func(data []byte) { f.Add(data, int64(0), false) })
	f.Fuzz(func(t *testing.T, data []byte, step int64, skipBad bool) {
		opts := ArrivalOptions{Step: time.Duration(step), SkipBad: skipBad}
		if opts.Step < 0 {
			opts.Step = 0
		}
		s, rep, err := ReadArrivals(bytes.NewReader(data), "fuzz.csv", opts)
		if err != nil {
			checkMessage(t, err.Error())
			return
		}
		if s.Step <= 0 || len(s.Values) == 0 || s.Missing() != 0 {
			t.Fatalf("step %v, %d values, %d NaN", s.Step, len(s.Values), s.Missing())
		}
		if total := sum(s.Values); total != float64(rep.Accepted) {
			t.Fatalf("counted %v requests from %d accepted rows", total, rep.Accepted)
		}
	})
}
