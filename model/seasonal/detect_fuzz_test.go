package seasonal

import (
	"encoding/binary"
	"math"
	"testing"
)

// standsOut is asked about lags beyond those computed when a refined
// shorter period scales a longer one past the last lag: such a lag
// cannot stand out, and asking must not index past the autocorrelations.
func TestStandsOutBeyondTheComputedLags(t *testing.T) {
	r := []float64{1, 0.1, 0.2, 0.9, 0.1, 0.2, 0.5}
	cases := []struct {
		name    string
		p, base int
		want    bool
	}{
		{"a peak above both neighbours", 3, 2, true},
		{"the far neighbour not computed: the near one decides", 6, 3, false},
		{"the lag itself not computed", 7, 3, false},
		{"far past the last lag", 380, 38, false},
		{"a base longer than the lag", 3, 5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := standsOut(r, c.p, c.base, 0.03); got != c.want {
				t.Errorf("standsOut(lag %d, base %d) = %v, want %v", c.p, c.base, got, c.want)
			}
		})
	}
}

// FuzzDetect feeds Detect arbitrary series, from a cycle the fuzzer
// shapes: it must return periods within half the series, shortest
// first, and never panic.
func FuzzDetect(f *testing.F) {
	f.Add(uint16(646), uint16(32), uint16(320), int64(1), []byte{1, 2, 3})
	f.Add(uint16(300), uint16(24), uint16(168), int64(7), []byte{})
	f.Add(uint16(50), uint16(7), uint16(0), int64(3), []byte{255, 0, 255})
	f.Fuzz(func(t *testing.T, n, short, long uint16, seed int64, noise []byte) {
		n = n % 2000
		x := make([]float64, n)
		for i := range x {
			v := 10.0
			if short > 1 {
				v += 5 * math.Sin(2*math.Pi*float64(i)/float64(short))
			}
			if long > 1 && i%int(long) < int(long)/7+1 {
				v += 8
			}
			if len(noise) > 0 {
				b := noise[i%len(noise)]
				v += float64(int8(b)) / 16 * float64(binary.LittleEndian.Uint16([]byte{byte(seed), byte(i)})%3)
			}
			x[i] = v
		}
		periods := Detect(x, DetectOptions{})
		for i, p := range periods {
			if p < 2 || p > len(x)/2 {
				t.Fatalf("period %d outside [2, %d]: %v", p, len(x)/2, periods)
			}
			if i > 0 && p <= periods[i-1] {
				t.Fatalf("periods %v: each must be longer than the one before", periods)
			}
		}
	})
}
