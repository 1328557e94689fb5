package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prewarm/prewarm/planner"
)

// Reserved is the purchase advice for the committed baseline.
type Reserved struct {
	// Recommended is k*, the baseline that minimises the expected cost
	// C(k) over the horizon (see the package documentation).
	Recommended int `json:"recommended"`
	// Current is the baseline committed today; Change = Recommended −
	// Current (positive: buy).
	Current int `json:"current"`
	Change  int `json:"change"`
	// BreakEven is r / p: the busy share above which a reserved instance
	// costs less than buying its hours on demand.
	BreakEven float64 `json:"break_even_share"`
	// BusyShare is the busy share of the k*-th instance: the share of the
	// horizon's hours in which the forecast expects at least k* instances
	// to be needed, b_k* = Σ_t P(N_t ≥ k*)·Δt / T. It is the one busy
	// share the report states.
	BusyShare float64 `json:"busy_share"`
	// ExpectedNeedGPUHours is E[Σ_t N_t·Δt], the need's GPU-hours.
	ExpectedNeedGPUHours float64 `json:"expected_need_gpu_hours"`
	// Levels are k = 0 … the need's top, with b_k and C(k).
	Levels []Level `json:"levels"`
	// Hindsight checks k* against the backtest's hybrid fleet.
	Hindsight *Hindsight `json:"hindsight,omitempty"`
	// Rule states the rule in words.
	Rule string `json:"rule"`
}

// Level is one candidate baseline.
type Level struct {
	Instances int `json:"instances"`
	// BusyShare is b_k: the expected share of the horizon the need is at
	// least k instances.
	BusyShare float64 `json:"busy_share"`
	// ExpectedCost is C(k) over the horizon, the burst on demand.
	ExpectedCost float64 `json:"expected_cost"`
}

// Burst is the advice above the baseline, priced on the plan's schedule.
type Burst struct {
	// GPUHours above the baseline, split into on-demand and spot.
	GPUHours         float64 `json:"gpu_hours"`
	OnDemandGPUHours float64 `json:"on_demand_gpu_hours"`
	SpotGPUHours     float64 `json:"spot_gpu_hours"`
	// SpotLimit is the most instances on spot at a time; SpotShare the
	// share of the burst's GPU-hours on spot.
	SpotLimit int     `json:"spot_limit"`
	SpotShare float64 `json:"spot_share"`
	// SpotEffectivePerHour is p_spot·(1 + λ·b): the spot price with the
	// re-boots after interruptions.
	SpotEffectivePerHour float64 `json:"spot_effective_per_hour"`
	// ExpectedInterruptions is λ × spot GPU-hours over the horizon.
	ExpectedInterruptions float64 `json:"expected_interruptions"`
	OnDemandCost          float64 `json:"on_demand_cost"`
	SpotCost              float64 `json:"spot_cost"`
	// Why says how the share was set.
	Why string `json:"why"`
}

// Cost compares the horizon's cost of the plan's schedule bought all on
// demand, with today's baseline, and with the advice.
type Cost struct {
	Horizon Duration `json:"horizon"`
	// GPUHours are the plan's; ExpectedGPUHours the plan's topped up
	// where demand across its band needs more (the reactive rules' share).
	GPUHours         float64 `json:"gpu_hours"`
	ExpectedGPUHours float64 `json:"expected_gpu_hours"`
	// ReservedGPUHours are the advised baseline's hours, paid whether used
	// or not (k*·T): ReservedUsedGPUHours of them run the plan, the rest
	// stand idle. PaidGPUHours are the reserved and the burst's hours,
	// what the advice pays for.
	ReservedGPUHours     float64 `json:"reserved_gpu_hours"`
	ReservedUsedGPUHours float64 `json:"reserved_used_gpu_hours"`
	PaidGPUHours         float64 `json:"paid_gpu_hours"`
	AllOnDemand          float64 `json:"all_on_demand"`
	// Current is the cost with today's baseline (Prices.ReservedInstances)
	// and the rest on demand.
	Current float64 `json:"current"`
	// Recommended is reserved k* plus the burst split, on the plan;
	// ExpectedRecommended adds the expected hours above the plan (on
	// demand): the budget if demand spreads across its band.
	Recommended         float64 `json:"recommended"`
	ExpectedRecommended float64 `json:"expected_recommended"`
	ReservedCost        float64 `json:"reserved_cost"`
	BurstCost           float64 `json:"burst_cost"`
	Saving              float64 `json:"saving"`
	SavingShare         float64 `json:"saving_share"`
	SavingPerWeek       float64 `json:"saving_per_week"`
	// Per1kRequests are the costs per 1,000 expected requests.
	AllOnDemandPer1k float64 `json:"all_on_demand_per_1k_requests"`
	RecommendedPer1k float64 `json:"recommended_per_1k_requests"`
}

// zGrid is the standard normal on 81 points of [−4, 4], with weights that
// sum to 1: the integration grid of the forecast distribution.
var zGrid, zWeights = func() ([]float64, []float64) {
	z := make([]float64, 81)
	w := make([]float64, 81)
	sum := 0.0
	for i := range z {
		z[i] = -4 + 0.1*float64(i)
		w[i] = math.Exp(-z[i] * z[i] / 2)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return z, w
}()

// The z-scores of the 80% and 95% bands.
const (
	z80 = 1.2815515655446004
	z95 = 1.959963984540054
)

// quantile is Q(z) of a forecast step: piecewise linear through the
// bands, extended linearly beyond ±1.96, never below 0.
func (p ForecastPoint) quantile(z float64) float64 {
	xs := [5]float64{-z95, -z80, 0, z80, z95}
	ys := [5]float64{p.Lower95, p.Lower80, p.Mean, p.Upper80, p.Upper95}
	i := 0
	for i < 3 && z > xs[i+1] {
		i++
	}
	v := ys[i] + (ys[i+1]-ys[i])*(z-xs[i])/(xs[i+1]-xs[i])
	return math.Max(v, 0)
}

// needMass is the need's distribution over the horizon: for each count n,
// the expected hours in which N_t = n.
type needMass struct {
	counts []int     // ascending
	hours  []float64 // expected hours at counts[i]
	total  float64   // T, the horizon in hours
}

func needDistribution(c planner.Config, fc Forecast) needMass {
	stepH := time.Duration(fc.Step).Hours()
	mass := map[int]float64{}
	for _, p := range fc.Points {
		for j, z := range zGrid {
			n := c.InstancesFor(p.quantile(z))
			n = min(max(n, c.Fleet.MinInstances), c.Fleet.MaxInstances)
			mass[n] += zWeights[j] * stepH
		}
	}
	m := needMass{total: float64(len(fc.Points)) * stepH}
	for n := range mass {
		m.counts = append(m.counts, n)
	}
	slices.Sort(m.counts)
	for _, n := range m.counts {
		m.hours = append(m.hours, mass[n])
	}
	return m
}

// busyHours is Σ_t P(N_t ≥ k)·Δt and burstHours Σ_t E[(N_t − k)⁺]·Δt.
func (m needMass) busyHours(k int) (busy, burst float64) {
	for i, n := range m.counts {
		if n >= k {
			busy += m.hours[i]
			burst += m.hours[i] * float64(n-k)
		}
	}
	return busy, burst
}

// maxLevels is how many baselines are listed one by one; above it only
// the counts the need takes are (C is linear between them, so its minimum
// is one of them).
const maxLevels = 2000

func candidates(m needMass, top int) []int {
	if top <= maxLevels {
		out := make([]int, top+1)
		for k := range out {
			out[k] = k
		}
		return out
	}
	return append([]int{0}, m.counts...)
}

// spotBudgetShare is the part of the SLO's miss budget spot interruptions
// may use; the rest is left to the forecast's own misses.
const spotBudgetShare = 0.5

// spotPlan is the spot rule (see the package doc): at most limit
// instances of the burst on spot at a time, at the effective price.
type spotPlan struct {
	limit     int
	effective float64
	why       string
}

func spotFor(c planner.Config, shown Prices, lambda float64, peak int) spotPlan {
	pr := c.Prices
	bootH := c.Fleet.BootDelay.Hours()
	sp := spotPlan{effective: pr.SpotPerHour * (1 + lambda*bootH)}
	switch {
	case pr.SpotPerHour <= 0:
		sp.why = "no spot price is given (--spot-price, prices.spot_per_hour), so all burst is on demand"
		return sp
	case sp.effective >= pr.OnDemandPerHour:
		sp.why = fmt.Sprintf("spot costs %s an hour with its re-boots, no less than on demand, so all burst is on demand", shown.perHour(sp.effective))
		return sp
	case lambda*bootH <= 0:
		sp.limit = peak
		sp.why = "spot is cheaper and never interrupted at the rate given, so all burst is on spot"
		return sp
	}
	budget := spotBudgetShare * (1 - c.SLO.Quantile)
	sp.limit = min(peak, int(math.Floor(budget*float64(peak)/(lambda*bootH))))
	verb := "run"
	if sp.limit == 1 {
		verb = "runs"
	}
	sp.why = fmt.Sprintf("spot is cheaper (%s an hour with its re-boots); at most %s %s on it at a time, so that the capacity "+
		"re-booting after interruptions (%.3g per spot instance-hour, %s each) stays within half the share of requests the SLO lets "+
		"wait longer, at the peak of %s", shown.perHour(sp.effective), countOf(sp.limit, "instance"), verb, lambda,
		spanWords(Duration(c.Fleet.BootDelay), true), countOf(peak, "instance"))
	return sp
}

// advise computes the purchase advice from the forecast and prices it on
// the plan's schedule.
func advise(c planner.Config, rep *Report, lambda float64) (Reserved, Burst, Cost) {
	fc, plan := rep.Forecast, rep.Plan
	m := needDistribution(c, fc)
	pr := c.Prices
	res := Reserved{Current: pr.ReservedInstances, Rule: "reserve the largest baseline whose busy share is at least " +
		"the reserved price over the on-demand price: the baseline of least expected cost"}
	if pr.OnDemandPerHour > 0 {
		res.BreakEven = pr.ReservedPerHour / pr.OnDemandPerHour
	}
	top := 0
	if len(m.counts) > 0 {
		top = m.counts[len(m.counts)-1]
	}
	_, res.ExpectedNeedGPUHours = m.busyHours(0)
	best := math.Inf(1)
	for _, k := range candidates(m, top) {
		busy, burst := m.busyHours(k)
		cost := pr.ReservedPerHour*float64(k)*m.total + pr.OnDemandPerHour*burst
		res.Levels = append(res.Levels, Level{Instances: k, BusyShare: busy / m.total, ExpectedCost: cost})
		if math.IsInf(best, 1) || cost < best-1e-9*math.Max(1, best) {
			best, res.Recommended, res.BusyShare = cost, k, busy/m.total
		}
	}
	res.Change = res.Recommended - res.Current
	cost, burst := priceOnPlan(c, plan, res.Recommended, spotFor(c, rep.Settings.Prices, lambda, plan.Peak), lambda)
	cost.Horizon = Duration(plan.End.Sub(plan.Start))
	cost.ExpectedGPUHours = expectedFleetHours(c, fc, plan)
	// The hours the band adds above the plan are the reactive rules'
	// scale-outs: on demand.
	cost.ExpectedRecommended = cost.Recommended + math.Max(cost.ExpectedGPUHours-cost.GPUHours, 0)*pr.OnDemandPerHour
	return res, burst, cost
}

// expectedFleetHours is E[Σ_t max(plan_t, N_t)·Δt]: the plan's GPU-hours
// topped up, where the demand in its band needs more than the plan, by the
// instances the reactive rules would add.
func expectedFleetHours(c planner.Config, fc Forecast, p Plan) float64 {
	step := time.Duration(fc.Step)
	total := 0.0
	for _, pt := range fc.Points {
		planned := float64(maxDesired(p.Changes, pt.At, pt.At.Add(step)))
		for j, z := range zGrid {
			n := min(max(c.InstancesFor(pt.quantile(z)), c.Fleet.MinInstances), c.Fleet.MaxInstances)
			total += zWeights[j] * math.Max(planned, float64(n)) * step.Hours()
		}
	}
	return total
}

// maxDesired is the most instances the schedule asks for in [from, to).
func maxDesired(s planner.Schedule, from, to time.Time) int {
	n := 0
	for i, st := range s {
		if !st.At.Before(to) {
			break
		}
		if i+1 < len(s) && !s[i+1].At.After(from) {
			continue
		}
		n = max(n, st.Desired)
	}
	return n
}

// priceOnPlan prices the plan's schedule: all on demand, with today's
// baseline, and with the advice (k reserved, the burst above it on spot up
// to sp.limit instances at a time, the rest on demand).
func priceOnPlan(c planner.Config, p Plan, k int, sp spotPlan, lambda float64) (Cost, Burst) {
	pr := c.Prices
	onDemand := planner.Prices{OnDemandPerHour: pr.OnDemandPerHour}
	all := onDemand.UsageOf(p.Changes, p.End)
	cur := onDemand
	cur.ReservedPerHour, cur.ReservedInstances = pr.ReservedPerHour, pr.ReservedInstances
	withCurrent := cur.UsageOf(p.Changes, p.End)
	adv := cur
	adv.ReservedInstances = k
	u := adv.UsageOf(p.Changes, p.End)
	// The spot layer is the first sp.limit instances above the baseline:
	// priced as a "reserved" baseline of k+limit, its burst is what is
	// left on demand.
	top := cur
	top.ReservedInstances = k + sp.limit
	above := top.UsageOf(p.Changes, p.End)

	b := Burst{GPUHours: u.BurstHours, SpotLimit: sp.limit, SpotEffectivePerHour: sp.effective, Why: sp.why}
	b.OnDemandGPUHours = above.BurstHours
	b.SpotGPUHours = u.BurstHours - above.BurstHours
	if u.BurstHours > 0 {
		b.SpotShare = b.SpotGPUHours / u.BurstHours
	}
	b.OnDemandCost = b.OnDemandGPUHours * pr.OnDemandPerHour
	b.SpotCost = b.SpotGPUHours * sp.effective
	b.ExpectedInterruptions = lambda * b.SpotGPUHours

	cost := Cost{GPUHours: all.GPUHours, AllOnDemand: all.Cost, Current: withCurrent.Cost,
		ReservedGPUHours: u.ReservedHours, ReservedUsedGPUHours: u.GPUHours - u.BurstHours, PaidGPUHours: u.ReservedHours + u.BurstHours,
		ReservedCost: u.ReservedCost, BurstCost: b.OnDemandCost + b.SpotCost}
	cost.Recommended = cost.ReservedCost + cost.BurstCost
	cost.Saving = cost.AllOnDemand - cost.Recommended
	if cost.AllOnDemand > 0 {
		cost.SavingShare = cost.Saving / cost.AllOnDemand
	}
	if d := p.End.Sub(p.Start); d > 0 {
		cost.SavingPerWeek = cost.Saving * (7 * 24 * time.Hour).Hours() / d.Hours()
	}
	if p.ExpectedRequests > 0 {
		cost.AllOnDemandPer1k = cost.AllOnDemand / p.ExpectedRequests * 1000
		cost.RecommendedPer1k = cost.Recommended / p.ExpectedRequests * 1000
	}
	return cost, b
}

// Capacity is the peak the SLO requires and the room left under max.
type Capacity struct {
	Max int `json:"max"`
	// SLOPeak is what the SLO needs at the forecast's 95% upper bound at
	// its busiest step (before max: it may exceed it), at SLOPeakAt.
	SLOPeak   int       `json:"slo_peak"`
	SLOPeakAt time.Time `json:"slo_peak_at"`
	// MeanPeak is the need at the forecast's busiest mean.
	MeanPeak int `json:"mean_peak"`
	// PlanPeak is the most the plan asks for.
	PlanPeak int `json:"plan_peak"`
	// Peak is the larger of PlanPeak and SLOPeak: the most the pool may
	// need. Peak + Headroom = Max.
	Peak int `json:"peak"`
	// Headroom is Max − Peak (negative when the need is above max),
	// HeadroomShare that over Max.
	Headroom      int     `json:"headroom"`
	HeadroomShare float64 `json:"headroom_share"`
}

func capacityOf(c planner.Config, rep *Report) Capacity {
	cp := Capacity{Max: c.Fleet.MaxInstances, PlanPeak: rep.Plan.Peak}
	// Needs are counted up to ten times max (a runaway forecast is not
	// searched for further: Erlang C's search is linear in the load).
	unbounded := c
	unbounded.Fleet.MaxInstances = 10 * max(c.Fleet.MaxInstances, 1)
	for _, p := range rep.Forecast.Points {
		if n := unbounded.InstancesFor(p.Upper95); n > cp.SLOPeak {
			cp.SLOPeak, cp.SLOPeakAt = n, p.At
		}
		cp.MeanPeak = max(cp.MeanPeak, unbounded.InstancesFor(p.Mean))
	}
	cp.Peak = max(cp.PlanPeak, cp.SLOPeak)
	cp.Headroom = cp.Max - cp.Peak
	if cp.Max > 0 {
		cp.HeadroomShare = float64(cp.Headroom) / float64(cp.Max)
	}
	return cp
}
