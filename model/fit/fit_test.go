package fit

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestLookup(t *testing.T) {
	if want := []string{"auto", "hw", "snaive", "profile", "naive2", "naive"}; !slices.Equal(Names(), want) {
		t.Errorf("Names() = %q, want %q", Names(), want)
	}
	for _, name := range Names() {
		if m, ok := Lookup(name); !ok || m.Name != name {
			t.Errorf("Lookup(%q) = %q, %v", name, m.Name, ok)
		}
	}
	if _, ok := Lookup("Auto"); ok {
		t.Error(`Lookup("Auto") found a method; names are exact`)
	}
}

// daily is two weeks of hourly values with a daily rhythm.
func daily() []float64 {
	v := make([]float64, 24*14)
	for i := range v {
		v[i] = 100 + 40*math.Sin(2*math.Pi*float64(i)/24)
	}
	return v
}

func TestForecastPeriods(t *testing.T) {
	tests := []struct {
		method  string
		periods []int
		want    []int
	}{
		{"snaive", nil, []int{24}},       // detected
		{"auto", nil, []int{24}},         // detected, reported, auto offers the clock's itself
		{"snaive", []int{12}, []int{12}}, // given
		{"snaive", []int{}, []int{}},     // none
	}
	for _, tt := range tests {
		m, _ := Lookup(tt.method)
		res, err := m.Forecast(Series{Values: daily(), Step: time.Hour, Periods: tt.periods}, 24, 0.9)
		if err != nil {
			t.Fatalf("%s %v: %v", tt.method, tt.periods, err)
		}
		if !slices.Equal(res.Periods, tt.want) || res.Periods == nil {
			t.Errorf("%s %v: periods %v, want %v", tt.method, tt.periods, res.Periods, tt.want)
		}
		if len(res.Mean) != 24 || len(res.Lower) != 24 || len(res.Upper) != 24 {
			t.Errorf("%s %v: %d steps, want 24", tt.method, tt.periods, len(res.Mean))
		}
	}
}

// The periods reach the method: seasonal naive at 24 repeats the last day,
// at none the last value.
func TestForecastUsesThePeriods(t *testing.T) {
	v := daily()
	m, _ := Lookup("snaive")
	day, err := m.Forecast(Series{Values: v, Step: time.Hour, Periods: []int{24}}, 24, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(day.Mean, v[len(v)-24:]) {
		t.Errorf("period 24: %v, want the last day", day.Mean[:3])
	}
	flat, err := m.Forecast(Series{Values: v, Step: time.Hour, Periods: []int{}}, 24, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range flat.Mean {
		if x != v[len(v)-1] {
			t.Fatalf("no period: %v, want the last value %v throughout", flat.Mean[:3], v[len(v)-1])
		}
	}
}
