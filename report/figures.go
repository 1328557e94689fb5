package report

import (
	"math"
	"slices"
)

// figures are the GPU-hours and costs the report prints as parts of a
// total, rounded so that the parts add up to the total as printed: each
// total is rounded on its own, and split into its parts by the largest
// remainder. GPU-hours are to a tenth, costs to a cent.
type figures struct {
	// PlanGPUHours = ReservedUsedGPUHours + BurstGPUHours;
	// BurstGPUHours = SpotGPUHours + OnDemandGPUHours.
	PlanGPUHours, ReservedUsedGPUHours, BurstGPUHours, SpotGPUHours, OnDemandGPUHours float64
	// ReservedGPUHours = ReservedUsedGPUHours + ReservedIdleGPUHours;
	// PaidGPUHours = ReservedGPUHours + BurstGPUHours.
	ReservedGPUHours, ReservedIdleGPUHours, PaidGPUHours float64
	// Advice = ReservedCost + SpotCost + OnDemandCost; Saving =
	// AllOnDemand − Advice.
	Advice, ReservedCost, SpotCost, OnDemandCost, AllOnDemand, Saving float64
}

// figuresOf rounds the advice's figures so that they add up as printed.
func figuresOf(rep *Report) figures {
	const hour, cent = 10, 100 // units a GPU-hour, a unit of currency
	c, b := rep.Cost, rep.Burst
	plan := split(c.GPUHours, hour, c.ReservedUsedGPUHours, b.GPUHours)
	burst := split(plan[1], 1, b.SpotGPUHours*hour, b.OnDemandGPUHours*hour)
	reserved := math.Round(c.ReservedGPUHours * hour)
	cost := split(c.Recommended, cent, c.ReservedCost, b.SpotCost, b.OnDemandCost)
	all := math.Round(c.AllOnDemand * cent)
	total := cost[0] + cost[1] + cost[2]
	return figures{
		PlanGPUHours: (plan[0] + plan[1]) / hour, ReservedUsedGPUHours: plan[0] / hour, BurstGPUHours: plan[1] / hour,
		SpotGPUHours: burst[0] / hour, OnDemandGPUHours: burst[1] / hour,
		ReservedGPUHours: reserved / hour, ReservedIdleGPUHours: (reserved - plan[0]) / hour, PaidGPUHours: (reserved + plan[1]) / hour,
		Advice: total / cent, ReservedCost: cost[0] / cent, SpotCost: cost[1] / cent, OnDemandCost: cost[2] / cent,
		AllOnDemand: all / cent, Saving: (all - total) / cent,
	}
}

// split rounds total×unit to a whole number and divides it among the
// parts (×unit) in whole numbers by the largest remainder, so that they
// sum to it. Parts that do not sum to the total (beyond rounding) are
// scaled to it first; negative or non-finite parts count as 0.
func split(total, unit float64, parts ...float64) []float64 {
	want := math.Round(total * unit)
	sum := 0.0
	exact := make([]float64, len(parts))
	for i, p := range parts {
		if v := p * unit; v > 0 && !math.IsInf(v, 0) {
			exact[i] = v
			sum += v
		}
	}
	out := make([]float64, len(parts))
	if sum <= 0 || !(want > 0) {
		return out
	}
	order := make([]int, len(parts))
	left := want
	for i, v := range exact {
		v *= want / sum
		out[i] = math.Floor(v)
		exact[i] = v - out[i]
		left -= out[i]
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case exact[a] > exact[b]:
			return -1
		case exact[a] < exact[b]:
			return 1
		}
		return 0
	})
	for i := 0; left > 0 && len(order) > 0; i = (i + 1) % len(order) {
		out[order[i]]++
		left--
	}
	return out
}
