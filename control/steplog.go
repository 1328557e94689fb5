package control

import "time"

// stepLog holds at most one value per forecast step, indexed by the step's
// number since the Unix epoch, over a window that slides forward: the
// controller's memory of demand, forecasts and errors. Lookups and updates
// are O(1) and forgetting is O(steps forgotten), where maps keyed by time
// made every refit walk the whole memory.
type stepLog[T any] struct {
	first int64 // step number of vals[0]
	vals  []T
	ok    []bool
	// changes counts the writes and forgets, so that what is derived
	// from the log can tell whether it still holds.
	changes uint64
}

// stepIndex is t's step number on a grid of step counted from the epoch.
func stepIndex(t time.Time, step time.Duration) int64 {
	ns, d := t.UnixNano(), int64(step)
	return (ns - ((ns%d)+d)%d) / d
}

// stepTime is the start of step k.
func stepTime(k int64, step time.Duration) time.Time { return time.Unix(0, k*int64(step)).UTC() }

func (l *stepLog[T]) get(k int64) (T, bool) {
	var zero T
	i := k - l.first
	if i < 0 || i >= int64(len(l.vals)) || !l.ok[i] {
		return zero, false
	}
	return l.vals[i], true
}

func (l *stepLog[T]) set(k int64, v T) {
	if len(l.vals) == 0 {
		l.first = k
	}
	var zero T
	if n := l.first - k; n > 0 { // before the window: grow it backwards
		l.vals = append(make([]T, n), l.vals...)
		l.ok = append(make([]bool, n), l.ok...)
		l.first = k
	}
	for k-l.first >= int64(len(l.vals)) {
		l.vals = append(l.vals, zero)
		l.ok = append(l.ok, false)
	}
	l.vals[k-l.first], l.ok[k-l.first] = v, true
	l.changes++
}

// forget drops the steps before k.
func (l *stepLog[T]) forget(k int64) {
	n := min(max(k-l.first, 0), int64(len(l.vals)))
	if n == 0 {
		return
	}
	l.vals, l.ok = l.vals[n:], l.ok[n:]
	l.first += n
	l.changes++
	if len(l.vals) == 0 {
		l.vals, l.ok = nil, nil
	}
}

// each calls f for every step held, oldest first.
func (l *stepLog[T]) each(f func(k int64, v T)) {
	for i, v := range l.vals {
		if l.ok[i] {
			f(l.first+int64(i), v)
		}
	}
}
