package planner

import (
	"testing"
)

// TestSettingDefaults: a setting left at 0 takes its default, and one a
// user can switch off is off when negative.
func TestSettingDefaults(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"unset", orDefault(0.0, 1.5), 1.5},
		{"negative is unset", orDefault(-1.0, 1.5), 1.5},
		{"set", orDefault(2.0, 1.5), 2},
		{"off", offOrDefault(-1.0, 1), 0},
		{"off unset", offOrDefault(0.0, 1), 1},
		{"off set", offOrDefault(1.25, 1), 1.25},
		{"carry", Calibration{Carry: -1}.CarryLog(), 0},
		{"headroom", Bounds{}.Headroom(), 1},
		{"spread", float64(Bounds{SlotSpread: -1}.Spread()), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// A currency is three capital letters, as ISO 4217 writes them.
func TestCheckCurrency(t *testing.T) {
	for _, tc := range []struct {
		code string
		ok   bool
	}{
		{"USD", true}, {"EUR", true}, {"CNY", true}, {"JPY", true},
		{"usd", false}, {"US", false}, {"USDT", false}, {"", false}, {"U$D", false}, {" USD", false}, {"ÉUR", false},
	} {
		if err := CheckCurrency(tc.code); (err == nil) != tc.ok {
			t.Errorf("CheckCurrency(%q) = %v, want ok %v", tc.code, err, tc.ok)
		}
	}
}
