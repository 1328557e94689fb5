package volcenginetest

import (
	"math"
	"slices"
)

// This file is the model's fleet: how a group brings its running members
// to its desired size (settle), in its ScalingMode and with its spot mix,
// and how spot capacity is lost and comes back (StockOut, Interrupt with
// or without SpotInstanceRemedy, SpotReturns). Every change happens at the
// moment of the request or call that causes it, dated by the boots' clock,
// so runs are deterministic; a member a remedy keeps until its replacement
// serves leaves at the first request or call at or after that time (reap).

// settle brings the group's running members to Desired, as the group's
// own scaling activity does after a change. A scale-in takes the newest
// running members: a group in ScalingMode recycle stops them and keeps
// them, one in release mode releases them. A scale-out in recycle mode
// starts stopped members first (serving after WarmStart), then launches
// instances (serving after BootDelay): on demand up to the mix's
// on-demand share, on spot for the rest while the zone has spot stock,
// and, while it has none, on demand with CompensateWithOnDemand or not
// at all without it (the group stays short until SpotReturns). Called
// with s.mu held.
func (s *Server) settle(g *Group) {
	for running := s.runningIn(g); len(running) > g.Desired; running = running[:len(running)-1] {
		if id := running[len(running)-1]; g.ScalingMode == ScalingModeRecycle {
			s.stop(id)
		} else {
			s.release(g, id)
		}
	}
	for n := len(s.runningIn(g)); n < g.Desired; n++ {
		if !s.startStopped(g) && !s.launch(g) {
			return
		}
	}
}

// runningIn lists the group's members that are not stopped, in launch
// order, leaving out those about to be reclaimed (ReclaimAt set): they no
// longer count towards the group's size. Called with s.mu held.
func (s *Server) runningIn(g *Group) []string {
	var out []string
	for _, id := range g.InstanceIDs {
		if in := s.instances[id]; s.lifecycle(id) != "Stopped" && (in == nil || in.ReclaimAt.IsZero()) {
			out = append(out, id)
		}
	}
	return out
}

// reap releases the members whose reclaim (ReclaimAt) has come, on the
// boots' clock. Every request and every accessor that reads the fleet
// reaps first. Called with s.mu held.
func (s *Server) reap() {
	now := s.bootNow()
	for _, g := range s.groups {
		for _, id := range slices.Clone(g.InstanceIDs) {
			if in := s.instances[id]; in != nil && !in.ReclaimAt.IsZero() && !now.Before(in.ReclaimAt) {
				s.release(g, id)
			}
		}
	}
}

// stop stops a member in economical mode. Called with s.mu held.
func (s *Server) stop(id string) {
	in := s.instances[id]
	if in == nil {
		in = &Instance{ID: id}
		s.instances[id] = in
	}
	in.Status, in.StoppedMode, in.ReadyAt = "STOPPED", "StopCharging", s.bootNow()
}

// release takes a member out of its group and deletes its instance.
// Called with s.mu held.
func (s *Server) release(g *Group, id string) {
	g.InstanceIDs = slices.DeleteFunc(g.InstanceIDs, func(x string) bool { return x == id })
	delete(s.instances, id)
}

// startStopped starts the first stopped member of a recycle-mode group
// that can start (an on-demand one, or a spot one while the zone has
// spot stock); false when there is none. Called with s.mu held.
func (s *Server) startStopped(g *Group) bool {
	if g.ScalingMode != ScalingModeRecycle {
		return false
	}
	for _, id := range g.InstanceIDs {
		in := s.instances[id]
		if in == nil || in.Status != "STOPPED" || in.Spot && s.spotOut[g.ID] {
			continue
		}
		in.Status, in.StoppedMode, in.ReadyAt = "RUNNING", "", s.bootNow().Add(s.WarmStart)
		return true
	}
	return false
}

// launch creates one member, on demand or on spot as the group's mix asks
// and the zone allows; false when the mix asks for spot the zone lacks and
// the group does not compensate on demand. Called with s.mu held.
func (s *Server) launch(g *Group) bool {
	onDemand, spot := s.mixIn(g)
	wantSpot := spotWanted(g.Distribution, g.Desired)
	useSpot := onDemand >= g.Desired-wantSpot && spot < wantSpot
	if useSpot && s.spotOut[g.ID] {
		if g.Distribution == nil || !g.Distribution.CompensateWithOnDemand {
			return false
		}
		useSpot = false
	}
	now := s.bootNow()
	id := s.newID("i")
	s.instances[id] = &Instance{ID: id, Status: "RUNNING", ReadyAt: now.Add(s.BootDelay), Spot: useSpot, CreatedAt: now}
	g.InstanceIDs = append(g.InstanceIDs, id)
	return true
}

// mixIn counts the group's running members on demand and on spot. Called
// with s.mu held.
func (s *Server) mixIn(g *Group) (onDemand, spot int) {
	for _, id := range s.runningIn(g) {
		if in := s.instances[id]; in != nil && in.Spot {
			spot++
		} else {
			onDemand++
		}
	}
	return onDemand, spot
}

// spotWanted is how many of desired members d puts on spot: those above
// OnDemandBaseCapacity less OnDemandPercentageAboveBaseCapacity percent of
// them, rounded to the nearest member; none without a distribution.
func spotWanted(d *Distribution, desired int) int {
	if d == nil {
		return 0
	}
	above := max(desired-d.OnDemandBaseCapacity, 0)
	return int(math.Round(float64(above) * float64(100-d.OnDemandPercentageAboveBaseCapacity) / 100))
}

// StockOut makes the group's zone run out of spot capacity: the cloud
// reclaims every running spot member of the group at once, without the
// notice an interruption gives (so SpotInstanceRemedy has nothing to act
// on: they leave it, released), and the group replaces them as settle
// does while the zone has no spot: on demand at once with
// CompensateWithOnDemand, otherwise not until SpotReturns. It returns the
// reclaimed members.
func (s *Server) StockOut(group string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	g, ok := s.groups[group]
	if !ok {
		return nil
	}
	s.spotOut[group] = true
	return s.reclaim(g, math.MaxInt, false)
}

// Interrupt is a spot interruption of the n newest running spot members
// of the group: the cloud's notice that it will reclaim them. With the
// group's SpotInstanceRemedy on, the group launches a replacement for
// each at the notice (as settle does: on spot while the zone has stock,
// on demand with CompensateWithOnDemand), and each noticed member serves
// on until its replacement serves (its ReclaimAt), then leaves, released:
// the group keeps its serving count. A noticed member for which no
// replacement can start leaves at once. With the remedy off the cloud
// reclaims them at the notice and the group launches their replacements
// then: it is short by them until those have booted. It returns the
// interrupted members.
func (s *Server) Interrupt(group string, n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	g, ok := s.groups[group]
	if !ok {
		return nil
	}
	return s.reclaim(g, n, true)
}

// reclaim takes up to n running spot members, newest first, out of the
// group and settles it. With notice and the group's SpotInstanceRemedy on,
// each stays until the replacement settle started for it serves (its
// ReclaimAt); otherwise it is released at once. Called with s.mu held.
func (s *Server) reclaim(g *Group, n int, notice bool) []string {
	var lost []string
	running := s.runningIn(g)
	for i := len(running) - 1; i >= 0 && len(lost) < n; i-- {
		if in := s.instances[running[i]]; in != nil && in.Spot {
			lost = append(lost, running[i])
		}
	}
	if !notice || g.Distribution == nil || !g.Distribution.SpotInstanceRemedy {
		for _, id := range lost {
			s.release(g, id)
		}
		s.settle(g)
		return lost
	}
	now := s.bootNow()
	for _, id := range lost {
		s.instances[id].ReclaimAt = now // out of the group's size from the notice on
	}
	s.settle(g)
	replacements := slices.DeleteFunc(s.runningIn(g), func(id string) bool { return slices.Contains(running, id) })
	for i, id := range lost {
		if i < len(replacements) {
			s.instances[id].ReclaimAt = s.instances[replacements[i]].ReadyAt
		} else {
			s.release(g, id)
		}
	}
	return lost
}

// SpotReturns ends the group's spot stock-out: the group launches, on
// spot, the members it was short of. Members it launched on demand in
// compensation stay on demand.
func (s *Server) SpotReturns(group string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	delete(s.spotOut, group)
	if g, ok := s.groups[group]; ok {
		s.settle(g)
	}
}

// Members returns copies of the group's member instances in launch order,
// stopped ones included.
func (s *Server) Members(group string) []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	g, ok := s.groups[group]
	if !ok {
		return nil
	}
	var out []Instance
	for _, id := range g.InstanceIDs {
		if in := s.instances[id]; in != nil {
			out = append(out, *in)
		} else {
			out = append(out, Instance{ID: id, Status: "RUNNING"})
		}
	}
	return out
}

// Lifecycle is a member's Status as DescribeScalingInstances reports it
// now: Pending, InService or Stopped.
func (s *Server) Lifecycle(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	return s.lifecycle(id)
}

// Tally is a group's members as tests count them, read at one instant:
// its desired size, its members stopped (StoppedInstanceCount), running
// (not stopped), serving (InService), and running on spot and on demand.
type Tally struct {
	Desired, Stopped, Running, Serving, Spot, OnDemand int
}

// Tally counts the group's members (the zero Tally for an unknown group).
func (s *Server) Tally(group string) Tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	g, ok := s.groups[group]
	if !ok {
		return Tally{}
	}
	t := Tally{Desired: g.Desired}
	for _, id := range g.InstanceIDs {
		in := s.instances[id]
		switch {
		case s.lifecycle(id) == "Stopped":
			t.Stopped++
			continue
		case in != nil && in.Spot:
			t.Spot++
		default:
			t.OnDemand++
		}
		t.Running++
		if s.lifecycle(id) == "InService" {
			t.Serving++
		}
	}
	return t
}
