package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prewarm/prewarm/actuator"
)

// The operating guide's table of back-end options is rendered from the
// declarations this binary registers, so it lists every option, with its
// kind, default and range, and nothing else.
func TestDocsListEveryOption(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := optionsTable(backendOptions())
	if !strings.Contains(string(raw), want) {
		t.Errorf("docs/operating.md lacks the back-end options table; it should read:\n\n%s", want)
	}
}

// optionsTable renders the options of every back-end as a Markdown table.
func optionsTable(backends map[string]actuator.OptionSet) string {
	var b strings.Builder
	b.WriteString("| back-end | option | kind | default | values | required | what it is |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(backends)) {
		if len(backends[name]) == 0 {
			fmt.Fprintf(&b, "| `%s` | (none) | | | | | |\n", name)
		}
		for _, o := range backends[name] {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s | %s |\n", name, o.Name, o.Kind,
				code(o.Default), optionValues(o), map[bool]string{true: "yes"}[o.Required], strings.ReplaceAll(o.Help, "|", `\|`))
		}
	}
	return b.String()
}

// optionValues renders what an option may be: its choices or its range.
func optionValues(o actuator.Option) string {
	switch {
	case len(o.OneOf) > 0:
		return strings.Join(o.OneOf, ", ")
	case o.PoolBounds:
		return "the pool's `min` to `max`"
	case o.Min != "" && o.Max != "":
		return o.Min + " to " + o.Max
	case o.Min != "":
		return "at least " + o.Min
	case o.Max != "":
		return "at most " + o.Max
	}
	return ""
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}
