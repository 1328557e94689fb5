package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/model/fit"
)

// writeDemandCSV writes n hourly steps of daily-cycle demand with the
// given timestamp style and returns the file's path.
func writeDemandCSV(t *testing.T, n int, style string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("timestamp,value\n")
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for i := range n {
		v := 100 + 50*math.Sin(2*math.Pi*float64(i%24)/24) + float64(i%7)
		ts := start.Add(time.Duration(i) * time.Hour)
		var cell string
		switch style {
		case "rfc3339":
			cell = ts.Format(time.RFC3339)
		case "space":
			cell = ts.Format("2006-01-02 15:04:05")
		case "unix":
			cell = strconv.FormatInt(ts.Unix(), 10)
		case "index":
			cell = strconv.Itoa(i)
		}
		fmt.Fprintf(&b, "%s,%.3f\n", cell, v)
	}
	p := filepath.Join(t.TempDir(), "demand.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestFitCSVOutput(t *testing.T) {
	tests := []struct {
		style     string
		firstTime string
		method    string
	}{
		{"rfc3339", "2026-01-19T00:00:00Z", "auto"},
		{"space", "2026-01-19T00:00:00Z", "snaive"},
		{"unix", "2026-01-19T00:00:00Z", "hw"},
		{"index", "336", "profile"},
	}
	for _, tc := range tests {
		t.Run(tc.style+"/"+tc.method, func(t *testing.T) {
			path := writeDemandCSV(t, 24*14, tc.style)
			code, out, errOut := runCmd("fit", "--input", path, "--horizon", "30", "--level", "90", "--method", tc.method)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 31 {
				t.Fatalf("%d rows, want header + 30", len(rows))
			}
			if got := strings.Join(rows[0], ","); got != "timestamp,forecast,lower,upper" {
				t.Errorf("header %q", got)
			}
			if rows[1][0] != tc.firstTime {
				t.Errorf("first timestamp %q, want %q", rows[1][0], tc.firstTime)
			}
			for i, r := range rows[1:] {
				var v [3]float64
				for k := range v {
					if v[k], err = strconv.ParseFloat(r[k+1], 64); err != nil {
						t.Fatalf("row %d: %v", i+1, err)
					}
				}
				if !(v[1] <= v[0] && v[0] <= v[2]) {
					t.Fatalf("row %d: forecast %v outside [%v, %v]", i+1, v[0], v[1], v[2])
				}
			}
		})
	}
}

func TestFitJSON(t *testing.T) {
	path := writeDemandCSV(t, 24*21, "rfc3339")
	code, out, errOut := runCmd("fit", "--input", path, "--horizon", "5", "--format", "json", "--period", "24")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res fit.Output
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(res.Points) != 5 || res.Level != 95 || len(res.Periods) != 1 || res.Periods[0] != 24 || !strings.HasPrefix(res.Method, "auto[") {
		t.Errorf("result %+v", res)
	}
	if res.Points[1].Timestamp != "2026-01-26T01:00:00Z" {
		t.Errorf("second timestamp %q", res.Points[1].Timestamp)
	}
}

// --period auto detects the daily cycle from the data.
func TestFitDetectsPeriod(t *testing.T) {
	path := writeDemandCSV(t, 24*21, "space")
	code, out, errOut := runCmd("fit", "--input", path, "--horizon", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res fit.Output
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Periods) == 0 || res.Periods[0] != 24 {
		t.Errorf("periods %v, want 24 first", res.Periods)
	}
}

func TestFitBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("timestamp,value\n2026-01-01 00:00:00,1\n2026-01-01 01:00:00,abc\n2026-01-01 02:00:00,3\nnot-a-time,4\n"), 0o644)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"bad rows name their lines", []string{"--input", bad, "--horizon", "3"}, 1, "bad.csv:3: value: value \"abc\" is not a number"},
		{"second bad row listed", []string{"--input", bad, "--horizon", "3"}, 1, "bad.csv:5: timestamp: cannot parse timestamp \"not-a-time\""},
		{"bad rows counted", []string{"--input", bad, "--horizon", "3"}, 1, "2 bad rows"},
		{"missing file", []string{"--input", filepath.Join(dir, "nope.csv"), "--horizon", "3"}, 1, "no such file"},
		{"no input", []string{"--horizon", "3"}, 2, "--input is required"},
		{"no horizon", []string{"--input", bad}, 2, "--horizon"},
		{"absurd horizon", []string{"--input", bad, "--horizon", "2000000000"}, 2, "--horizon 2000000000: must be between 1 and"},
		{"bad level", []string{"--input", bad, "--horizon", "3", "--level", "0.95x"}, 2, "level"},
		{"level out of range", []string{"--input", bad, "--horizon", "3", "--level", "100"}, 2, "percentage"},
		{"bad format", []string{"--input", bad, "--horizon", "3", "--format", "xml"}, 2, "--format"},
		{"bad method", []string{"--input", bad, "--horizon", "3", "--method", "prophet"}, 2, "--method"},
		{"bad period", []string{"--input", bad, "--horizon", "3", "--period", "1"}, 2, "--period"},
		{"unordered periods", []string{"--input", bad, "--horizon", "3", "--period", "168,24"}, 2, "shortest first"},
		{"unknown flag", []string{"--input", bad, "--horizon", "3", "--bogus"}, 2, "bogus"},
		{"stray argument", []string{"--input", bad, "--horizon", "3", "extra"}, 2, "unexpected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(append([]string{"fit"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.wantCode, errOut)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q does not mention %q", errOut, tc.wantErr)
			}
		})
	}
}

func TestFitHelp(t *testing.T) {
	code, _, errOut := runCmd("fit", "--help")
	if code != 0 || !strings.Contains(errOut, "--horizon") || !strings.Contains(errOut, "timestamp,forecast,lower,upper") {
		t.Errorf("exit %d, help %q", code, errOut)
	}
}

// Repairs made while loading (gaps, duplicate and out-of-order rows) are
// reported on stderr with their lines; a clean file reports nothing.
func TestFitReportsRepairs(t *testing.T) {
	clean := writeDemandCSV(t, 24*3, "space")
	if code, _, errOut := runCmd("fit", "--input", clean, "--horizon", "2", "--method", "naive"); code != 0 || errOut != "" {
		t.Errorf("clean file: exit %d, stderr %q, want 0 and nothing", code, errOut)
	}
	messy := filepath.Join(t.TempDir(), "messy.csv")
	os.WriteFile(messy, []byte("timestamp,value\n"+
		"2026-01-01 00:00:00,1\n"+
		"2026-01-01 02:00:00,3\n"+
		"2026-01-01 01:00:00,2\n"+ // line 4: earlier than line 3
		"2026-01-01 01:00:00,4\n"+ // line 5: earlier than line 3, duplicate of line 4
		"2026-01-01 05:00:00,5\n"), 0o644) // 03:00 and 04:00 missing
	code, out, errOut := runCmd("fit", "--input", messy, "--horizon", "2", "--method", "naive")
	if code != 0 || !strings.HasPrefix(out, "timestamp,forecast,lower,upper\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"gaps: 2 missing steps in 1 runs", "duplicate timestamps: 1", "lines 5 (first 4)", "out-of-order rows: 2, sorted; lines 4 5"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// An indexed file's forecast continues its index at its own stride.
func TestFitIndexContinues(t *testing.T) {
	tests := []struct {
		name, rows string
		want       []string
	}{
		{"from 0 by 1", "0,1\n1,2\n2,3\n", []string{"3", "4"}},
		{"from 10 by 2", "10,1\n12,2\n14,3\n16,4\n", []string{"18", "20"}},
	}
	for _, tc := range tests {
		p := filepath.Join(t.TempDir(), "idx.csv")
		os.WriteFile(p, []byte("timestamp,value\n"+tc.rows), 0o644)
		code, out, errOut := runCmd("fit", "--input", p, "--horizon", "2", "--method", "naive")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 3 || rows[1][0] != tc.want[0] || rows[2][0] != tc.want[1] {
			t.Errorf("%s: output %q (%v), want timestamps %v", tc.name, out, err, tc.want)
		}
	}
}
