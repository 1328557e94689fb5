package poolspec

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration: where (file, line and the
// YAML path of the key, e.g. pools[0].forecast.step) and what.
type Problem struct {
	Source string // the file, as given to Parse
	Line   int    // 0 when the configuration was built in code
	Path   string // YAML keys and list indexes
	Msg    string
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Errors is every problem found in a configuration, in file order. Parse
// reports all of them, not just the first, so one edit can fix them all.
type Errors []Problem

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, p := range e {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
