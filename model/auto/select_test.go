package auto

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/accuracy"
)

// A choice made by Select forecasts later windows of the same series, each
// starting part of a day later, about as well as a full search on that
// window does, with the members it chose and an interval that covers the
// series.
func TestSelectedForecastsLaterWindows(t *testing.T) {
	const window, h = 24 * 28, 12
	x := demand(window+24*3, 5)
	f := New(Config{Periods: []int{24, 168}}).(model.Selector)
	first, chosen, err := f.Select(x[:window], h, 0.8)
	if err != nil || chosen == nil {
		t.Fatalf("Select: choice %v, err %v", chosen, err)
	}
	members := strings.TrimSuffix(strings.TrimPrefix(first.Method, "auto["), "]")
	for _, shift := range []int{3, 6, 13, 21} {
		w := x[shift : shift+window]
		actual := x[shift+window : shift+window+h]
		reused, err := chosen.Forecast(w, h, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		full, err := f.Forecast(w, h, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		if reused.Method != "auto["+members+"]" {
			t.Errorf("shift %d: method %q, want the chosen members %q", shift, reused.Method, members)
		}
		sReused, _ := accuracy.SMAPE(actual, reused.Mean)
		sFull, _ := accuracy.SMAPE(actual, full.Mean)
		// The noise is 5%; both stay well within twice that, and the
		// reused choice within 2 points of the full search.
		if sReused > 10 || sReused > sFull+2 {
			t.Errorf("shift %d: sMAPE %.2f reused, %.2f with a full search", shift, sReused, sFull)
		}
		for j := range reused.Mean {
			if !(reused.Lower[j] <= reused.Mean[j] && reused.Mean[j] <= reused.Upper[j]) {
				t.Fatalf("shift %d, step %d: interval [%v, %v] misses the mean %v", shift, j, reused.Lower[j], reused.Upper[j], reused.Mean[j])
			}
		}
	}
}

// The choice is kept only for a forecast it can serve: a window too short
// for its members is forecast by the full search, and a forecast that fell
// back leaves no choice to keep.
func TestSelectKeepsOnlyWhatItCanServe(t *testing.T) {
	f := New(Config{Periods: []int{24, 168}}).(model.Selector)
	x := demand(24*28, 7)
	_, chosen, err := f.Select(x, 12, 0.8)
	if err != nil || chosen == nil {
		t.Fatalf("Select: choice %v, err %v", chosen, err)
	}
	short := x[len(x)-24*3:]
	got, err := chosen.Forecast(short, 12, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Forecast(short, 12, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != want.Method || got.Mean[11] != want.Mean[11] {
		t.Errorf("a window too short for the choice: %s %v, want the full search's %s %v", got.Method, got.Mean[11], want.Method, want.Mean[11])
	}
	for _, tc := range []struct {
		name    string
		history []float64
	}{
		{"constant", []float64{5, 5, 5, 5, 5, 5, 5, 5}},
		{"too short to validate", []float64{1, 2, 3}},
	} {
		fc, chosen, err := f.Select(tc.history, 12, 0.8)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if fc.Fallback == "" || chosen != nil {
			t.Errorf("%s: fallback %q, choice %v; want a fallback and no choice", tc.name, fc.Fallback, chosen)
		}
	}
	if _, _, err := f.Select(x, 0, 0.8); err == nil {
		t.Error("horizon 0: no error")
	}
	if _, err := chosen.Forecast(x, 12, 1.5); err == nil {
		t.Error("level 1.5: no error")
	}
}

// A choice may forecast several windows at once.
func TestSelectedConcurrentUse(t *testing.T) {
	f := New(Config{Periods: []int{24, 168}}).(model.Selector)
	x := demand(24*31, 9)
	_, chosen, err := f.Select(x[:24*28], 12, 0.8)
	if err != nil || chosen == nil {
		t.Fatalf("Select: choice %v, err %v", chosen, err)
	}
	want := make([]model.Forecast, 8)
	for i := range want {
		if want[i], err = chosen.Forecast(x[i*5:i*5+24*28], 12, 0.8); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range want {
		wg.Go(func() {
			got, err := chosen.Forecast(x[i*5:i*5+24*28], 12, 0.8)
			if err != nil || got.Mean[11] != want[i].Mean[11] || got.Upper[0] != want[i].Upper[0] {
				t.Errorf("window %d: concurrent forecast differs (%v)", i, err)
			}
			if math.IsNaN(got.Mean[0]) {
				t.Errorf("window %d: NaN forecast", i)
			}
		})
	}
	wg.Wait()
}
