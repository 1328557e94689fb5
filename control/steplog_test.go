package control

import (
	"testing"
	"time"
)

func TestStepLog(t *testing.T) {
	var l stepLog[float64]
	l.set(10, 1)
	l.set(12, 3)
	l.set(8, -1) // before the window
	for _, c := range []struct {
		k    int64
		want float64
		ok   bool
	}{{7, 0, false}, {8, -1, true}, {9, 0, false}, {10, 1, true}, {11, 0, false}, {12, 3, true}, {13, 0, false}} {
		if v, ok := l.get(c.k); v != c.want || ok != c.ok {
			t.Errorf("get(%d) = %v, %v; want %v, %v", c.k, v, ok, c.want, c.ok)
		}
	}
	l.forget(11)
	var seen []int64
	l.each(func(k int64, _ float64) { seen = append(seen, k) })
	if len(seen) != 1 || seen[0] != 12 {
		t.Errorf("after forget(11): %v, want [12]", seen)
	}
	l.forget(100)
	if _, ok := l.get(12); ok || len(l.vals) != 0 {
		t.Error("forgetting past the end keeps values")
	}
	// The grid counts from the Unix epoch, so 7-minute steps do not depend
	// on where a day starts.
	step := 7 * time.Minute
	at := time.Date(2026, 3, 1, 0, 3, 0, 0, time.UTC)
	if k := stepIndex(at, step); stepTime(k, step).After(at) || !stepTime(k+1, step).After(at) {
		t.Errorf("step %d of %v does not hold %v", k, step, at)
	}
}
