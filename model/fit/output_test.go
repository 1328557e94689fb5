package fit

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/model"
)

func TestParsePeriods(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr error
	}{
		{"auto", nil, nil},
		{"", nil, nil},
		{"none", []int{}, nil},
		{"24", []int{24}, nil},
		{" 24, 168 ", []int{24, 168}, nil},
		{"1", nil, ErrPeriodList},
		{"24,x", nil, ErrPeriodList},
		{"168,24", nil, ErrPeriodOrder},
		{"24,24", nil, ErrPeriodOrder},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePeriods(tt.in)
			if !errors.Is(err, tt.wantErr) || !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("ParsePeriods(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestNewOutput(t *testing.T) {
	r := Result{Forecast: model.Forecast{Method: "snaive", Mean: []float64{1, 2}, Lower: []float64{0, 1}, Upper: []float64{2, 3}}, Periods: []int{24}}
	tests := []struct {
		name string
		r    Result
		want []Point
	}{
		{"one point a step, stamped", r, []Point{{"s0", 1, 0, 2}, {"s1", 2, 1, 3}}},
		{"no steps, no points", Result{Forecast: model.Forecast{Method: "snaive"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := NewOutput("in.csv", 80, tt.r, func(j int) string { return "s" + strconv.Itoa(j) })
			if !slices.Equal(out.Points, tt.want) || out.Input != "in.csv" || out.Level != 80 || out.Method != "snaive" {
				t.Errorf("NewOutput = %+v, want points %v of in.csv at 80%%", out, tt.want)
			}
		})
	}
}

// The CSV has its header, one row per point, and ten significant digits.
func TestWriteCSV(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []Point
		want   string
	}{
		{"no points", nil, "timestamp,forecast,lower,upper\n"},
		{"two points", []Point{{Timestamp: "2024-01-01T00:00:00Z", Forecast: 1.0 / 3, Lower: -2, Upper: 1e12},
			{Timestamp: "7", Forecast: 12345.678901234, Lower: 0, Upper: 0.5}},
			"timestamp,forecast,lower,upper\n2024-01-01T00:00:00Z,0.3333333333,-2,1e+12\n7,12345.6789,0,0.5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := (Output{Points: tc.points}).WriteCSV(&b); err != nil || b.String() != tc.want {
				t.Errorf("WriteCSV = %q, %v; want %q", b.String(), err, tc.want)
			}
		})
	}
}
