package volcengine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// This file moves on-demand stand-ins back to spot. A group whose
// InstancesDistribution has CompensateWithOnDemand launches on-demand
// instances while its zone is out of spot, and nothing in the API moves
// them back to spot once spot returns: a group that holds its size stays
// on demand. SettleSpot does the move, at the decisions where the pool
// holds its size (actuator.Safe.Resize): it probes whether spot is back by
// scaling the group out by the stand-ins (the group launches per its
// distribution), and once the launches serve it keeps the plan's mix and
// removes the rest, newest on-demand first, so that the serving count
// never drops below the plan. A probe answered on demand again (the zone
// is still out of stock) is undone, and the next waits
// Options.SpotReturnAfter.

var _ actuator.SpotSettler = (*Actuator)(nil)

// maxStandInsMoved bounds the stand-ins one probe goes for (one
// RemoveInstances call's worth); more are moved at the next decisions.
const maxStandInsMoved = maxRemove

// spotReturn is SettleSpot's state of one group: the probe in flight (nil:
// none) and the time before which no probe starts (the back-off after a
// probe that found no spot).
type spotReturn struct {
	probe *spotProbe
	after time.Time
}

// spotProbe is a scale-out SettleSpot made to find out whether spot is
// back. base is the serving size the group holds beside it (SetDesired's
// size), extra the members it asked for beyond base, sent the
// DesireInstanceNumber this Actuator last gave the group; while the
// group's desired size is sent, Capacity leaves extra out. wanted is how
// many stand-ins it went for; mix the distribution it was made under; at
// when it began. ran and stopped hold the members that ran (any status
// but Stopped) and the ones stopped just before it: a running member not
// in ran is one the probe added, and one in stopped was started from the
// warm tier of a recycle-mode group (which a scale-out starts first)
// rather than created.
type spotProbe struct {
	base, extra, sent, max, wanted int
	mix                            Distribution
	at                             time.Time
	ran, stopped                   map[string]bool
}

// SettleSpot implements actuator.SpotSettler for a group whose plan has a
// spot tier with the on-demand fallback (SetSpot with CompensateWithOnDemand):
// it moves the on-demand members that stood in for spot during a
// stock-out back to spot, one step a call. With no probe in flight, a
// group that holds its size (every running member InService, as many as
// its desired size) with more on-demand members than its distribution
// asks for at that size holds stand-ins: SettleSpot scales it out by them
// (at most maxStandInsMoved; in a recycle-mode group also by its stopped
// members, which a scale-out starts first) and the group launches per its
// distribution. With a probe in flight, once its launches serve, it keeps
// the plan's mix at the serving size (spot members first, on-demand ones
// oldest first) and removes the rest with RemoveInstances, decreasing the
// desired size: the newest on-demand stand-ins released where spot
// replaced them, the probe's on-demand launches released where the zone
// still had no spot (the next probe then waits Options.SpotReturnAfter),
// and the warm tier's members it started recycled back. It starts
// nothing while the group is resizing, within the back-off, or while a
// warm tier fills, and finishes a probe in flight even when the mix has
// changed since; it reports whether it changed the group. Errors name the
// group and spot.fallback.
func (a *Actuator) SettleSpot(ctx context.Context, pool string) (changed bool, err error) {
	if err := checkID("scaling group ID", pool); err != nil {
		return false, err
	}
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.back.probe == nil {
		switch {
		case gs.spot == nil || !volcengine.BoolValue(gs.spot.CompensateWithOnDemand):
			return false, nil // no spot tier, or fallback none: no stand-ins to move
		case a.opts.Now().Before(gs.back.after), gs.warm != nil && gs.warm.filling > 0:
			return false, nil
		}
	}
	g, err := a.describeGroup(ctx, pool)
	if err == nil {
		if gs.back.probe == nil {
			changed, err = a.probe(ctx, pool, g, gs)
		} else {
			changed, err = a.finishProbe(ctx, pool, g, gs)
		}
	}
	if err != nil {
		return changed, fmt.Errorf("scaling group %s: moving on-demand stand-ins back to spot (spot.fallback %s): %w",
			pool, planner.SpotFallbackOnDemand, err)
	}
	return changed, nil
}

// member is a group's member as SettleSpot sorts them.
type member = autoscaling.ScalingInstanceForDescribeScalingInstancesOutput

// probe starts a probe for spot in group g (as just read) when it holds
// stand-ins; see SettleSpot. Called with gs.mu held.
func (a *Actuator) probe(ctx context.Context, group string, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput, gs *groupState) (bool, error) {
	desired, hi, err := sizeOf(group, g)
	if err != nil {
		return false, err
	}
	all, err := a.members(ctx, group, "")
	if err != nil {
		return false, err
	}
	var running, stopped []*member
	for _, m := range all {
		if volcengine.StringValue(m.Status) == "Stopped" {
			stopped = append(stopped, m)
			continue
		}
		if volcengine.StringValue(m.Status) != "InService" {
			return false, nil // a member boots or leaves: the group is resizing
		}
		running = append(running, m)
	}
	if len(running) != desired {
		return false, nil // the group is on its way to its desired size
	}
	spot, err := a.spotMembers(ctx, idsOf(running))
	if err != nil || len(spot) < len(running) {
		return false, err // a member ECS does not describe: try again later
	}
	onDemand := 0
	for _, isSpot := range spot {
		if !isSpot {
			onDemand++
		}
	}
	n := min(onDemand-onDemandWanted(*gs.spot, desired), maxStandInsMoved)
	if n <= 0 {
		return false, nil
	}
	warm := 0
	if volcengine.StringValue(g.ScalingMode) == ScalingModeRecycle {
		warm = len(stopped) // a scale-out starts these before it creates any
	}
	if room := hi - desired - warm; n > room {
		if room <= 0 {
			gs.back.after = a.opts.Now().Add(a.opts.SpotReturnAfter)
			a.log.InfoContext(ctx, "on-demand stand-ins stay: the group has no room below its max to probe for spot",
				"pool", group, "stand_ins", n, "desired", desired, "stopped", warm, "max", hi, "next_try_after", gs.back.after)
			return false, nil
		}
		n = room
	}
	extra := n + warm
	if err := a.modifyDesired(ctx, group, desired+extra); err != nil {
		return false, err
	}
	pr := &spotProbe{base: desired, extra: extra, sent: desired + extra, max: hi, wanted: n, mix: *gs.spot,
		at: a.opts.Now(), ran: map[string]bool{}, stopped: map[string]bool{}}
	for _, m := range running {
		pr.ran[volcengine.StringValue(m.InstanceId)] = true
	}
	for _, m := range stopped {
		pr.stopped[volcengine.StringValue(m.InstanceId)] = true
	}
	gs.back.probe = pr
	a.log.InfoContext(ctx, "probing whether spot is back: scaling the group out by its on-demand stand-ins",
		"pool", group, "stand_ins", n, "on_demand", onDemand, "desired", desired, "sent", desired+extra)
	return true, nil
}

// finishProbe ends the probe in flight in group g (as just read) once its
// launches serve, or once Options.SpotReturnAfter has passed since it
// began; see SettleSpot. Called with gs.mu held.
func (a *Actuator) finishProbe(ctx context.Context, group string, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput, gs *groupState) (bool, error) {
	pr, now := gs.back.probe, a.opts.Now()
	desired, _, err := sizeOf(group, g)
	if err != nil {
		return false, err
	}
	if desired != pr.sent {
		// Someone else (a scheduled policy, the console) set the size: the
		// probe's members are no longer told apart from theirs.
		a.log.WarnContext(ctx, "the group's desired size was changed outside prewarm; its probe for spot is dropped",
			"pool", group, "desired", desired, "expected", pr.sent)
		gs.back = spotReturn{after: now.Add(a.opts.SpotReturnAfter)}
		return false, nil
	}
	all, err := a.members(ctx, group, "")
	if err != nil {
		return false, err
	}
	var serving, waiting []*member // waiting: the probe's members not serving
	running := 0
	for _, m := range all {
		id, status := volcengine.StringValue(m.InstanceId), volcengine.StringValue(m.Status)
		switch {
		case status == "Stopped":
			continue
		case status == "InService":
			serving = append(serving, m)
		case !pr.ran[id]:
			waiting = append(waiting, m)
		}
		running++
	}
	// Until every running member serves and the group holds what it was
	// asked for, the probe's launches are on their way (or another
	// member is replaced): nothing is removed, so the serving count
	// cannot drop below the plan.
	timedOut := now.Sub(pr.at) >= a.opts.SpotReturnAfter
	if (len(serving) < running || running < pr.sent) && !timedOut {
		return false, nil
	}
	spot, err := a.spotMembers(ctx, idsOf(serving))
	if err != nil {
		return false, err
	}
	mix := pr.mix
	if gs.spot != nil {
		mix = *gs.spot
	}
	keep := keepMix(serving, spot, pr, pr.base-onDemandWanted(mix, pr.base))
	var release, recycle []string
	found, moved := 0, 0 // spot members the probe added; stand-ins it moved
	for _, m := range serving {
		id := volcengine.StringValue(m.InstanceId)
		fresh := !pr.ran[id]
		if fresh && spot[id] {
			found++
		}
		switch {
		case keep[id]:
		case fresh && pr.stopped[id]:
			recycle = append(recycle, id) // back to the warm tier it came from
		default:
			release = append(release, id)
			if !fresh && !spot[id] {
				moved++
			}
		}
	}
	release = append(release, idsOf(waiting)...) // only once timed out
	changed := false
	for _, batch := range []struct {
		ids  []string
		mode string
	}{{release, removeRelease}, {recycle, ReleaseRecycle}} {
		done, _, err := a.removeMembers(ctx, group, batch.ids, batch.mode, true)
		pr.sent, pr.extra = pr.sent-done, max(pr.extra-done, 0)
		if changed = changed || done > 0; err != nil {
			return changed, err
		}
	}
	if pr.sent != pr.base {
		// The group launched fewer than asked (or lost some): what it
		// still owes the probe is not wanted any more.
		if err := a.modifyDesired(ctx, group, pr.base); err != nil {
			return changed, err
		}
		changed = true
	}
	gs.back = spotReturn{}
	if found < pr.wanted {
		gs.back.after = now.Add(a.opts.SpotReturnAfter)
		a.log.InfoContext(ctx, "the zone has no spot for every stand-in yet: the probe's on-demand launches are removed",
			"pool", group, "stand_ins_moved", moved, "wanted", pr.wanted, "timed_out", timedOut,
			"next_probe_after", gs.back.after, "option", "options."+OptSpotReturnAfter)
		return changed, nil
	}
	a.log.InfoContext(ctx, "on-demand stand-ins moved back to spot", "pool", group, "stand_ins_moved", moved, "desired", pr.base)
	return changed, nil
}

// keepMix chooses the serving members a group keeps at size base after a
// probe, by their kind (spot): spotWant of them on spot where it has them,
// the rest on demand. Within each kind it keeps those that ran before the
// probe first (on-demand ones oldest first, so the newest stand-ins go),
// then those the probe created, then those it started from the warm tier
// (which go back to it).
func keepMix(serving []*member, spot map[string]bool, pr *spotProbe, spotWant int) map[string]bool {
	rank := func(m *member) int {
		switch id := volcengine.StringValue(m.InstanceId); {
		case pr.ran[id]:
			return 0
		case !pr.stopped[id]:
			return 1
		}
		return 2
	}
	var onSpot, onDemand []*member
	for _, m := range serving {
		if spot[volcengine.StringValue(m.InstanceId)] {
			onSpot = append(onSpot, m)
		} else {
			onDemand = append(onDemand, m)
		}
	}
	byAge := func(x, y *member) int {
		if r := rank(x) - rank(y); r != 0 {
			return r
		}
		return strings.Compare(volcengine.StringValue(x.CreatedTime), volcengine.StringValue(y.CreatedTime))
	}
	slices.SortStableFunc(onSpot, byAge)
	slices.SortStableFunc(onDemand, byAge)
	nSpot := min(max(spotWant, pr.base-len(onDemand)), len(onSpot), pr.base)
	nOnDemand := min(pr.base-nSpot, len(onDemand))
	keep := map[string]bool{}
	for _, kept := range [][]*member{onSpot[:nSpot], onDemand[:nOnDemand]} {
		for _, m := range kept {
			keep[volcengine.StringValue(m.InstanceId)] = true
		}
	}
	return keep
}

// onDemandWanted is how many of desired members distribution d puts on
// demand: OnDemandBaseCapacity, and of those above it all but the spot
// share, round(above × (100 − OnDemandPercentageAboveBaseCapacity) / 100),
// rounded to the nearest member as the stand-in rounds it (the API's own
// rounding is not documented: a difference of one leaves one stand-in, or
// makes a probe that the group answers on demand).
func onDemandWanted(d Distribution, desired int) int {
	base := min(int(volcengine.Int32Value(d.OnDemandBase)), desired)
	above := desired - base
	pct := int(volcengine.Int32Value(d.OnDemandPercentage))
	if d.OnDemandPercentage == nil {
		pct = 100
	}
	return desired - int(math.Round(float64(above)*float64(100-pct)/100))
}

// sizeOf reads group g's DesireInstanceNumber and MaxInstanceNumber,
// refusing counts no group can have.
func sizeOf(group string, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput) (desired, hi int, err error) {
	if g.DesireInstanceNumber == nil || *g.DesireInstanceNumber < 0 || g.MaxInstanceNumber == nil || *g.MaxInstanceNumber < 0 {
		return 0, 0, &APIError{Action: "DescribeScalingGroups", Code: codeMalformedResponse,
			Message: fmt.Sprintf("scaling group %s: no size a group can have in the reply (DesireInstanceNumber %d, MaxInstanceNumber %d)",
				group, volcengine.Int32Value(g.DesireInstanceNumber), volcengine.Int32Value(g.MaxInstanceNumber)),
			HTTPStatus: 200, Kind: actuator.ErrTransient}
	}
	return int(*g.DesireInstanceNumber), int(*g.MaxInstanceNumber), nil
}

// spotStrategyNone is ECS's SpotStrategy of an on-demand instance; a spot
// one has SpotAsPriceGo or SpotWithPriceLimit.
const spotStrategyNone = "NoSpot"

// spotMembers tells which of the instances ids run on spot, by the
// SpotStrategy ECS DescribeInstances reports for each (Auto Scaling's
// DescribeScalingInstances has no such field in API 2020-01-01): one
// request a hundred IDs, each page followed. An instance ECS does not
// return is missing from the map.
func (a *Actuator) spotMembers(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for chunk := range slices.Chunk(ids, maxPoolInstances) {
		var next *string
		for page := 0; page < maxPages; page++ {
			req, resp := a.ecs.DescribeInstancesRequest(&ecs.DescribeInstancesInput{
				InstanceIds: volcengine.StringSlice(chunk),
				MaxResults:  volcengine.Int32(maxPoolInstances),
				NextToken:   next,
			})
			if _, err := a.send(ctx, "DescribeInstances", req); err != nil {
				return nil, err
			}
			for _, in := range resp.Instances {
				if in != nil && volcengine.StringValue(in.InstanceId) != "" {
					s := volcengine.StringValue(in.SpotStrategy)
					out[volcengine.StringValue(in.InstanceId)] = s != "" && s != spotStrategyNone
				}
			}
			next = resp.NextToken
			if len(resp.Instances) == 0 || volcengine.StringValue(next) == "" {
				break
			}
		}
	}
	return out, nil
}

// probeExtra is how many of group g's members (as just read) are a
// probe's for spot: none without one, or when the group's desired size is
// no longer the one this Actuator sent. Called with gs.mu held.
func probeExtra(gs *groupState, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput) int {
	pr := gs.back.probe
	if pr == nil || int(volcengine.Int32Value(g.DesireInstanceNumber)) != pr.sent {
		return 0
	}
	return pr.extra
}
