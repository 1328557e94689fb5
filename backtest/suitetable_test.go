package backtest

import (
	"strings"
	"testing"
)

// The suite's table names the reserved base of each trace that replayed
// on one, and says nothing of it when none did.
func TestSuiteTableNamesTheReservedBase(t *testing.T) {
	entry := func(name string, reserved int) SuiteEntry {
		return SuiteEntry{Trace: name, Reserved: reserved, VsBaseline: 0.9, VsOracle: 1.1, MeetsSLO: true,
			Baseline: Choice{Policy: PolicyFlat, Settings: map[string]string{"instances": "4"}}}
	}
	cases := []struct {
		name    string
		entries []SuiteEntry
		want    string // "" : no reserved line
	}{
		{"none reserved", []SuiteEntry{entry("a.csv", 0), entry("b.csv", 0)}, ""},
		{"each its own base", []SuiteEntry{entry("a.csv", 6), entry("b.csv", 0), entry("c.csv", 2)},
			"reserved base, every policy (prices.reserved_instances): a.csv 6, c.csv 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteSuiteTable(&b, SuiteReport{SLOTarget: 0.995, Entries: c.entries, SuiteSummary: summarise(c.entries)}); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if c.want == "" && strings.Contains(got, "reserved base") {
				t.Errorf("a suite without a reserved base names one:\n%s", got)
			}
			if c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("table lacks %q:\n%s", c.want, got)
			}
		})
	}
}
