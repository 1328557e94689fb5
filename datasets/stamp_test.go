package datasets_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prewarm/prewarm/datasets"
)

func TestStamp(t *testing.T) {
	start := time.Date(2026, 1, 5, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name string
		s    datasets.Series
		i    int
		want string
	}{
		{"RFC 3339 in UTC", datasets.Series{Start: start, Step: time.Hour}, 2, "2026-01-05T11:00:00Z"},
		{"an index continues", datasets.Series{Start: time.Unix(0, 0).Add(10 * datasets.DefaultIndexUnit), Step: 2 * datasets.DefaultIndexUnit, Index: true}, 3, "16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Stamp(tt.i); got != tt.want {
				t.Errorf("Stamp(%d) = %q, want %q", tt.i, got, tt.want)
			}
		})
	}
}

func TestListBadRows(t *testing.T) {
	rows := func(n int) error {
		e := &datasets.BadRowsError{}
		for i := range n {
			e.Rows = append(e.Rows, datasets.RowError{File: "f.csv", Line: i + 2, Column: "value", Problem: "not a number"})
		}
		return fmt.Errorf("loading: %w", e)
	}
	other := errors.New("other")
	tests := []struct {
		name      string
		err       error
		wantLines int
		wantErr   string
	}{
		{"another error passes through", other, 0, "other"},
		{"every row of a few", rows(3), 3, "in.csv: 3 bad rows; fix them and run again"},
		{"the first rows of many, then a count", rows(datasets.MaxListedBadRows + 5), datasets.MaxListedBadRows + 1, "in.csv: 25 bad rows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			err := datasets.ListBadRows(&w, tt.err, "in.csv")
			if lines := strings.Count(w.String(), "\n"); lines != tt.wantLines || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("printed %d lines, returned %v; want %d and %q", lines, err, tt.wantLines, tt.wantErr)
			}
		})
	}
}
