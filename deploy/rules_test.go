package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/store/prometheus/promtest"
)

// ruleFile is the part of a Prometheus rule file the tests read.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T) ruleFile {
	t.Helper()
	var rf ruleFile
	b, err := os.ReadFile(filepath.Join("prometheus", "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatal(err)
	}
	return rf
}

// TestRules runs promtool check rules and the unit tests of rules_test.yml.
func TestRules(t *testing.T) {
	promtool := promtest.Promtool(t)
	for _, args := range [][]string{
		{"check", "rules", filepath.Join("prometheus", "rules.yml")},
		{"test", "rules", filepath.Join("prometheus", "rules_test.yml")},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		} else {
			t.Logf("promtool %v: %s", args, out)
		}
	}
}

// TestRulesCoverContract checks that rules.yml has the alerts of the
// contract, uses only contract metrics, and that rules_test.yml shows each
// alert both firing and not firing.
func TestRulesCoverContract(t *testing.T) {
	rf := readRules(t)
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			checkMetrics(t, "rules.yml "+r.Alert+r.Record, r.Expr)
			if r.Alert != "" {
				alerts = append(alerts, r.Alert)
			}
		}
	}
	for _, a := range contractAlerts {
		if !slices.Contains(alerts, a) {
			t.Errorf("rules.yml lacks the alert %s of docs/metrics.md", a)
		}
	}

	var tests struct {
		Tests []struct {
			Name  string `yaml:"name"`
			Cases []struct {
				Alert string `yaml:"alertname"`
				Exp   []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	b, err := os.ReadFile(filepath.Join("prometheus", "rules_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, c := range tc.Cases {
			if len(c.Exp) > 0 {
				fires[c.Alert] = true
			} else {
				silent[c.Alert] = true
			}
		}
	}
	for _, a := range alerts {
		if !fires[a] {
			t.Errorf("rules_test.yml never shows %s firing", a)
		}
		if !silent[a] {
			t.Errorf("rules_test.yml never shows %s not firing", a)
		}
	}
}

// docs/metrics.md, the operators' list, names every metric and alert of
// the contract the dashboard and the rules are checked against.
func TestMetricsDocListsTheContract(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range contract {
		if !strings.Contains(string(doc), "`"+m) {
			t.Errorf("docs/metrics.md does not list %s", m)
		}
	}
	for _, a := range contractAlerts {
		if !strings.Contains(string(doc), "`"+a+"`") {
			t.Errorf("docs/metrics.md does not list the alert %s", a)
		}
	}
}
