package backtest

import (
	"math"
	"math/rand/v2"
)

// fleet is the simulated pool: instances are booting (billed, not serving)
// until their ready tick, then serve until released or interrupted.
type fleet struct {
	readyOnDemand, readySpot int
	// pending holds the booting instances in launch order.
	pending []booting
	// bootTicks is the boot delay in ticks.
	bootTicks int
	// reserved instances are billed at the reserved price all the time.
	reserved int
	// spotShare of the instances above the reserved baseline run on spot.
	spotShare float64
	// interruptP is a ready spot instance's chance of being interrupted
	// in one tick.
	interruptP float64
	rng        *rand.Rand

	interruptions int
}

type booting struct {
	readyTick int
	spot      bool
}

func (f *fleet) ready() int { return f.readyOnDemand + f.readySpot }
func (f *fleet) total() int { return f.ready() + len(f.pending) }

// spotCount returns the spot instances, booting or ready.
func (f *fleet) spotCount() int {
	n := f.readySpot
	for _, b := range f.pending {
		if b.spot {
			n++
		}
	}
	return n
}

// setDesired launches or releases instances so total() == n. Launches are
// ready bootTicks later; releases take booting instances first (newest
// first), then ready spot, then ready on-demand ones.
func (f *fleet) setDesired(n, tick int) {
	if n > f.total() {
		wantSpot := int(math.Round(f.spotShare * float64(max(n-f.reserved, 0))))
		spots := f.spotCount()
		for f.total() < n {
			spot := spots < wantSpot
			if spot {
				spots++
			}
			f.pending = append(f.pending, booting{readyTick: tick + f.bootTicks, spot: spot})
		}
		return
	}
	for f.total() > n && len(f.pending) > 0 {
		f.pending = f.pending[:len(f.pending)-1]
	}
	for f.total() > n && f.readySpot > 0 {
		f.readySpot--
	}
	for f.total() > n {
		f.readyOnDemand--
	}
}

// advance makes the instances due by tick ready.
func (f *fleet) advance(tick int) {
	k := 0
	for k < len(f.pending) && f.pending[k].readyTick <= tick {
		if f.pending[k].spot {
			f.readySpot++
		} else {
			f.readyOnDemand++
		}
		k++
	}
	if k > 0 {
		f.pending = append(f.pending[:0], f.pending[k:]...)
	}
}

// interrupt removes each ready spot instance with probability interruptP.
func (f *fleet) interrupt() {
	if f.interruptP <= 0 || f.rng == nil {
		return
	}
	for i := f.readySpot; i > 0; i-- {
		if f.rng.Float64() < f.interruptP {
			f.readySpot--
			f.interruptions++
		}
	}
}

// billing accumulates per-second charges.
type billing struct {
	instanceSeconds               float64
	reservedCost, onDemand, spotC float64
}

// bill charges one tick of seconds at the given hourly prices: the reserved
// baseline always, on-demand instances above it, spot instances at the spot
// price. Booting instances are billed: the cloud charges from launch.
func (b *billing) bill(f *fleet, seconds, reservedPerHour, onDemandPerHour, spotPerHour float64) {
	spot := f.spotCount()
	onDemand := f.total() - spot
	h := seconds / 3600
	b.instanceSeconds += float64(f.total()) * seconds
	b.reservedCost += float64(f.reserved) * h * reservedPerHour
	b.onDemand += float64(max(onDemand-f.reserved, 0)) * h * onDemandPerHour
	b.spotC += float64(spot) * h * spotPerHour
}

func (b *billing) cost() float64 { return b.reservedCost + b.onDemand + b.spotC }
