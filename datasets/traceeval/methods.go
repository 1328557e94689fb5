package traceeval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prewarm/prewarm/model"
	"github.com/prewarm/prewarm/model/auto"
	"github.com/prewarm/prewarm/model/holtwinters"
	"github.com/prewarm/prewarm/model/seasonal"
)

// Methods are the methods 'forecaster eval traces' can score besides the
// baseline, by name, the default one first; each is built per window,
// knowing the window's step.
func Methods() []Method {
	return []Method{
		{Name: "auto", New: func(w Window) model.Forecaster { return auto.New(auto.Config{Step: w.Step}) }},
		{Name: "hw", New: func(w Window) model.Forecaster { return holtwinters.Forecaster{Periods: w.Periods} }},
		{Name: "profile", New: func(w Window) model.Forecaster {
			return seasonal.Profile{Period: w.Period, Cycles: 7, Robust: true, Relative: true}
		}},
		{Name: "naive", New: func(Window) model.Forecaster { return seasonal.Naive{} }},
	}
}

// MethodNames are the names of Methods, in order.
func MethodNames() []string {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.Name)
	}
	return names
}

// PickMethods returns the Methods names lists, in its order; an unknown
// name is an error.
func PickMethods(names []string) ([]Method, error) {
	all := Methods()
	var out []Method
	for _, name := range names {
		i := slices.IndexFunc(all, func(m Method) bool { return m.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(MethodNames(), ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}
