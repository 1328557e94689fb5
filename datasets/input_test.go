package datasets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/prewarm/prewarm/store"
)

// utf16Bytes encodes s as UTF-16 in the byte order given, with a
// byte-order mark when bom is set.
func utf16Bytes(s string, order binary.AppendByteOrder, bom bool) []byte {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		b = order.AppendUint16(b, u)
	}
	return b
}

const hourly = "time,rps\n2024-01-01T00:00:00Z,10\n2024-01-01T01:00:00Z,12\n2024-01-01T02:00:00Z,11\n"

// A file that is not comma-separated UTF-8 CSV is refused with what it
// looks like and what to do, never its raw bytes; a UTF-8 byte-order mark
// just works.
func TestNotCommaSeparatedUTF8(t *testing.T) {
	semicolon := strings.ReplaceAll(hourly, ",", ";")
	tests := []struct {
		name string
		data []byte
		want []string // parts of the message
	}{
		{"semicolons", []byte(semicolon), []string{`f.csv:1: the header "time;rps" is semicolon-separated`, "comma-separated", "decimal comma"}},
		{"tabs", []byte(strings.ReplaceAll(hourly, ",", "\t")), []string{`the header "time\trps" is tab-separated`}},
		{"pipes", []byte(strings.ReplaceAll(hourly, ",", "|")), []string{"is pipe-separated"}},
		{"UTF-16LE with BOM", utf16Bytes(hourly, binary.LittleEndian, true), []string{"UTF-16 (little-endian, with a byte-order mark)", "save it as UTF-8 CSV", "iconv -f UTF-16"}},
		{"UTF-16BE with BOM", utf16Bytes(hourly, binary.BigEndian, true), []string{"UTF-16 (big-endian, with a byte-order mark)"}},
		{"UTF-16LE without BOM", utf16Bytes(hourly, binary.LittleEndian, false), []string{"UTF-16 little-endian without a byte-order mark", "iconv -f UTF-16LE"}},
		{"UTF-16BE without BOM", utf16Bytes(semicolon, binary.BigEndian, false), []string{"UTF-16 big-endian without a byte-order mark"}},
		{"Windows-1252", []byte("time,d\xe9bit\n2024-01-01T00:00:00Z,10\n"), []string{"not UTF-8 (line 1, byte 7", "Windows-1252"}},
		{"gzip", []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"), []string{"gzip-compressed", "gunzip"}},
		{"xlsx", []byte("PK\x03\x04\x14\x00\x06\x00"), []string{"ZIP archive (an .xlsx workbook?)", "CSV UTF-8"}},
		{"binary", []byte("\x00\x00\x01\x02\x00\xff\x00\x10"), []string{"binary data"}},
		{"one column", []byte("rps\n10\n12\n"), []string{`f.csv:1: the header has one column, "rps": want a time column and a value column separated by a comma`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadCSV(bytes.NewReader(tt.data), "f.csv", CSVOptions{})
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			if !printable(msg) {
				t.Errorf("message holds raw bytes: %q", msg)
			}
			for _, field := range []string{"ValueColumn", "SkipBad", "TimeColumn", "Tick"} {
				if strings.Contains(msg, field) {
					t.Errorf("message names the Go field %s: %s", field, msg)
				}
			}
			if _, _, aerr := ReadArrivals(bytes.NewReader(tt.data), "f.csv", ArrivalOptions{}); aerr == nil && tt.name != "one column" {
				t.Errorf("ReadArrivals accepted it")
			}
		})
	}
	bom := append(append([]byte(nil), utf8BOM...), hourly...)
	s, rep, err := ReadCSV(bytes.NewReader(bom), "bom.csv", CSVOptions{})
	if err != nil || len(s.Values) != 3 || rep.TimeColumn != "time" {
		t.Errorf("UTF-8 with a byte-order mark: %v, %v, time column %q", err, s.Values, rep.TimeColumn)
	}
}

// printable reports whether msg is valid UTF-8 with no control character
// but the newline.
func printable(msg string) bool {
	if !utf8.ValidString(msg) {
		return false
	}
	for _, r := range msg {
		if r < ' ' && r != '\n' || r == 0x7f {
			return false
		}
	}
	return true
}

// series24 is a day of hourly rows near 10 req/s, one row of which holds v
// (at line 2+at).
func series24(at int, v string) string {
	var b strings.Builder
	b.WriteString("time,rps\n")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 24 {
		val := fmt.Sprint(10 + i%5)
		if i == at {
			val = v
		}
		fmt.Fprintf(&b, "%s,%s\n", start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), val)
	}
	return b.String()
}

// Absurd values are refused naming the line (1e300; 99999 among tens),
// dropped with SkipBad and kept, listed, with AllowOutliers.
func TestAbsurdValues(t *testing.T) {
	tests := []struct {
		name, data string
		line       int
		want       string
	}{
		{"1e300", series24(5, "1e300"), 7, "f.csv:7: rps: value 1e+300 is above 1e+12, the largest value prewarm accepts (a unit or typing error? --allow-outliers keeps it, --skip-bad drops it)"},
		{"99999 among tens", series24(20, "99999"), 22, "f.csv:22: rps: value 99999 is 8333× the median 12 of the file's values (more than 1000×)"},
		{"1e13 in a short file", "time,rps\n2024-01-01T00:00:00Z,1\n2024-01-01T01:00:00Z,1e13\n2024-01-01T02:00:00Z,1\n", 3, "value 1e+13 is above 1e+12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep, err := ReadCSV(strings.NewReader(tt.data), "f.csv", CSVOptions{})
			var re *RowError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &re) || re.Line != tt.line {
				t.Fatalf("error %v, want line %d: %s", err, tt.line, tt.want)
			}
			s, rep, err := ReadCSV(strings.NewReader(tt.data), "f.csv", CSVOptions{SkipBad: true})
			if err != nil || !math.IsNaN(s.Values[tt.line-2]) || len(rep.Bad) != 1 || rep.Rows-rep.Accepted != 1 {
				t.Errorf("SkipBad: %v, value %v, %d bad rows, want a gap", err, s.Values, len(rep.Bad))
			}
			s, rep, err = ReadCSV(strings.NewReader(tt.data), "f.csv", CSVOptions{AllowOutliers: true})
			if err != nil || math.IsNaN(s.Values[tt.line-2]) || len(rep.Outliers) != 1 || rep.Outliers[0].Line != tt.line || rep.Clean() ||
				!strings.Contains(rep.Notice("forecaster plan"), fmt.Sprintf("outliers kept (--allow-outliers): 1; lines %d", tt.line)) {
				t.Errorf("AllowOutliers: %v, %v, report %+v:\n%s", err, s.Values, rep.Outliers, rep.Notice("forecaster plan"))
			}
		})
	}
	// A trace whose values are not absurd is untouched, also with zeros
	// (the median is of the positive values).
	s, rep, err := ReadCSV(strings.NewReader(series24(3, "0")), "f.csv", CSVOptions{})
	if err != nil || len(rep.Outliers) != 0 || len(rep.Bad) != 0 || s.Values[3] != 0 {
		t.Errorf("ordinary file: %v, %+v", err, rep)
	}
}

// Every command prints one notice for the repairs: nothing for a clean
// file, else the duplicates merged, rows re-ordered and gaps filled with
// their lines and counts.
func TestNotice(t *testing.T) {
	_, clean, err := ReadCSV(strings.NewReader(hourly), "f.csv", CSVOptions{})
	if err != nil || clean.Notice("forecaster backtest") != "" {
		t.Errorf("clean file: %v, notice %q", err, clean.Notice("forecaster backtest"))
	}
	messy := "time,rps\n2024-01-01T00:00:00Z,10\n2024-01-01T02:00:00Z,12\n2024-01-01T01:00:00Z,11\n2024-01-01T02:00:00Z,99\n2024-01-01T05:00:00Z,11\n"
	_, rep, err := ReadCSV(strings.NewReader(messy), "f.csv", CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Notice("forecaster backtest")
	for _, w := range []string{
		"forecaster backtest: the input needed repairs:\nf.csv: 5 rows, 5 accepted",
		"gaps: 2 missing steps in 1 runs, filled with NaN; 2 at 2024-01-01T03:00:00Z",
		"duplicate timestamps: 1, merged by mean; lines 5 (first 3)",
		"out-of-order rows: 1, sorted; lines 4",
	} {
		if !strings.Contains(n, w) {
			t.Errorf("notice lacks %q:\n%s", w, n)
		}
	}
}

// One time grid: a step set by the caller buckets rows on the store's
// epoch-aligned windows. For steps that divide a day this is the grid
// time.Truncate gave (year 1 and 1970 are a whole number of days apart);
// a week now starts on Thursdays (1970-01-01), as the store's windows.
func TestEpochGrid(t *testing.T) {
	at := time.Date(2024, 3, 6, 17, 42, 13, 0, time.UTC) // a Wednesday
	for _, step := range []time.Duration{time.Minute, 5 * time.Minute, 90 * time.Minute, time.Hour, 8 * time.Hour, 24 * time.Hour} {
		if got, old := store.WindowStart(at, step), at.Truncate(step); !got.Equal(old) {
			t.Errorf("step %v divides a day but the grid moved: %v, was %v", step, got, old)
		}
	}
	var data strings.Builder
	data.WriteString("time,rps\n")
	for d := range 20 {
		fmt.Fprintf(&data, "%s,%d\n", at.AddDate(0, 0, d).Format(time.RFC3339), d)
	}
	s, _, err := ReadCSV(strings.NewReader(data.String()), "f.csv", CSVOptions{Step: 7 * 24 * time.Hour})
	if err != nil || s.Start.Weekday() != time.Thursday || !s.Start.Equal(store.WindowStart(s.Start, 7*24*time.Hour)) {
		t.Errorf("weekly step: %v, start %v (%v)", err, s.Start, s.Start.Weekday())
	}
	r, err := Resample(Series{Start: at, Step: 5 * time.Minute, Values: []float64{1, 2}}, 25*time.Minute, AggregateSum)
	if err != nil || !r.Start.Equal(store.WindowStart(at, 25*time.Minute)) {
		t.Errorf("Resample to 25m: %v, start %v", err, r.Start)
	}
	_, _, err = ReadCSV(strings.NewReader("time,rps\n1500-01-01T00:00:00Z,1\n1500-01-01T01:00:00Z,2\n"), "f.csv", CSVOptions{})
	if err == nil || !strings.Contains(err.Error(), "outside 1678-09-21 to 2261-04-11, the span of the time grid") {
		t.Errorf("year 1500: %v", err)
	}
}
