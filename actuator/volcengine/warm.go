package volcengine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
)

// The values of a scaling group's ScalingMode (DescribeScalingGroups).
// The API takes it only when the group is created (CreateScalingGroup;
// ModifyScalingGroup has no such parameter in API 2020-01-01, SDK
// v1.1.35). The RemoveInstances reference (API 2020-01-01) says
// RemoveMode=recycle shuts an instance down and stops billing it only in a
// group of ScalingMode recycle, and releases it in any other; the
// DescribeScalingInstances reference lists the member statuses this file
// filters on (InService, Stopped). docs/volcengine.md, "Warm tier", has
// the addresses and what is assumed beyond them.
const (
	// ScalingModeRelease groups release what a scale-in removes.
	ScalingModeRelease = "release"
	// ScalingModeRecycle groups stop what a scale-in removes, in
	// economical mode, keep it (StoppedInstanceCount), and start those
	// stopped members first at a scale-out: the warm tier.
	ScalingModeRecycle = "recycle"
)

// maxRemove is how many instances one RemoveInstances call takes
// (InstanceIds.N, N in 1-20).
const maxRemove = 20

// warmTier is what SetWarm asked of one group: target stopped members to
// keep, and filling members launched to join them, not yet recycled, that
// the group's desired size holds beside the serving size SetDesired asked
// for; max is the group's MaxInstanceNumber as last read, and sent the
// DesireInstanceNumber this Actuator last gave it. ranBefore holds the
// members that ran (any status but Stopped) just before the launches
// still filling were asked for: the members serving now that are not in
// it are the tier's launches, the ones to recycle.
type warmTier struct {
	target, filling, max, sent int
	ranBefore                  map[string]bool
}

// SetWarm implements actuator.WarmPooler for a group in ScalingMode
// recycle: it keeps the group's StoppedInstanceCount at warm. Too few
// stopped members: it raises the group's desired size by the shortfall,
// and once those instances serve (booted once, the image and weights on
// their disks) it recycles them (RemoveInstances, RemoveMode=recycle,
// DecreaseDesiredCapacity), so they stop in economical mode and the next
// scale-out starts them first, in the pool's warm_start. Too many: it
// releases the surplus (RemoveInstances, RemoveMode=release) or gives up
// launches still on their way. What cannot be done at once (the boots)
// is finished by SettleWarm, which Safe.SetWarm calls at each decision
// that repeats the size, and which also refills the warm tier after a
// scale-out has started some of it. While a probe for spot (SettleSpot)
// scales the group, SetWarm only records the size: the settling waits for
// the probe's end. A group in another ScalingMode keeps no stopped
// members: SetWarm refuses any warm size but 0 with an error naming the
// mode.
func (a *Actuator) SetWarm(ctx context.Context, pool string, warm int, reason string) error {
	if err := checkID("scaling group ID", pool); err != nil {
		return err
	}
	if warm < 0 || warm > math.MaxInt32 {
		return fmt.Errorf("volcengine: %w: warm %d out of range", actuator.ErrRejected, warm)
	}
	g, err := a.describeGroup(ctx, pool)
	if err != nil {
		return err
	}
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if mode := volcengine.StringValue(g.ScalingMode); mode != ScalingModeRecycle {
		gs.warm = nil
		if warm == 0 {
			return nil
		}
		return fmt.Errorf("volcengine: %w: scaling group %s is not in ScalingMode recycle (DescribeScalingGroups says %q): a warm tier (warm_start) needs a group in ScalingMode %s, "+
			"which keeps scaled-in instances stopped and starts them first; the mode is chosen when the group is created, "+
			"so create the group in recycle mode or remove warm_start from the pool", actuator.ErrRejected, pool, a.red.Snippet(mode, 40), ScalingModeRecycle)
	}
	t := gs.warm
	if t == nil {
		t = &warmTier{}
		gs.warm = t
	}
	t.target = warm
	if gs.back.probe != nil {
		// A probe for spot (SettleSpot) is scaling the group: the tier is
		// settled once it has ended.
		return nil
	}
	if _, err := a.settleWarm(ctx, pool, g, t); err != nil {
		return fmt.Errorf("scaling group %s: keeping %d members stopped: %w", pool, warm, err)
	}
	a.log.InfoContext(ctx, "scaling group warm tier set", "pool", pool, "warm", warm, "stopped", volcengine.Int32Value(g.StoppedInstanceCount),
		"launching", t.filling, "reason", reason)
	return nil
}

// SettleWarm implements actuator.WarmSettler: it moves the group's warm
// tier one step towards the size SetWarm last asked for, as SetWarm does
// (settleWarm): it recycles the launches that now serve, refills what a
// scale-out started and releases a surplus. It reports whether it changed
// the group; without a tier (no SetWarm, or one refused), or while a
// probe for spot (SettleSpot) scales the group, it reads and changes
// nothing. Errors name the group and the size kept.
func (a *Actuator) SettleWarm(ctx context.Context, pool string) (changed bool, err error) {
	if err := checkID("scaling group ID", pool); err != nil {
		return false, err
	}
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	t := gs.warm
	if t == nil || gs.back.probe != nil {
		return false, nil // no tier, or a probe for spot scales the group
	}
	g, err := a.describeGroup(ctx, pool)
	if err != nil {
		return false, err
	}
	if changed, err = a.settleWarm(ctx, pool, g, t); err != nil {
		return changed, fmt.Errorf("scaling group %s: keeping %d members stopped: %w", pool, t.target, err)
	}
	if changed {
		a.log.InfoContext(ctx, "scaling group warm tier settled", "pool", pool, "warm", t.target, "launching", t.filling)
	}
	return changed, nil
}

// settleWarm moves group g (as just read) one step towards t: it recycles
// the launched members that serve, then launches the stopped members
// missing or removes those beyond t.target. changed reports whether it
// changed the group (g is then stale). Called with the group's lock held.
func (a *Actuator) settleWarm(ctx context.Context, group string, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput, t *warmTier) (changed bool, err error) {
	stopped := int(volcengine.Int32Value(g.StoppedInstanceCount))
	desired := int(volcengine.Int32Value(g.DesireInstanceNumber))
	if stopped < 0 || desired < 0 || g.MaxInstanceNumber == nil || *g.MaxInstanceNumber < 0 {
		// Counts no group can have: a broken reply, not a size to act on.
		return false, &APIError{Action: "DescribeScalingGroups", Code: codeMalformedResponse,
			Message: fmt.Sprintf("scaling group %s: counts no group can have in the reply (StoppedInstanceCount %d, DesireInstanceNumber %d, MaxInstanceNumber %d)",
				group, stopped, desired, volcengine.Int32Value(g.MaxInstanceNumber)),
			HTTPStatus: 200, Kind: actuator.ErrTransient}
	}
	t.max = int(*g.MaxInstanceNumber)
	if t.filling > 0 && desired != t.sent {
		// Someone else (a scheduled policy, the console) set the size: it
		// holds no launches for the warm tier any more, and counting them
		// would recycle serving members.
		a.log.WarnContext(ctx, "the group's desired size was changed outside prewarm; its launches for the warm tier are no longer counted",
			"pool", group, "desired", desired, "expected", t.sent, "launching", t.filling)
		t.filling = 0
	}
	if t.filling > 0 {
		n, err := a.recycleLaunched(ctx, group, desired-t.filling, t.filling, t.ranBefore)
		t.filling, stopped, desired, t.sent = t.filling-n, stopped+n, desired-n, desired-n
		if changed = n > 0; err != nil {
			return changed, err
		}
	}
	gap := t.target - stopped - t.filling
	if gap > 0 {
		// A scale-out of a recycle-mode group starts its stopped members
		// first: to end with gap more stopped, launch the stopped ones
		// too, and recycle them all once they serve.
		k := min(gap+stopped, t.max-desired)
		if k <= 0 {
			return changed, nil
		}
		if err := a.noteRunning(ctx, group, t); err != nil {
			return changed, err
		}
		if err := a.modifyDesired(ctx, group, desired+k); err != nil {
			return changed, err
		}
		t.filling, t.sent = t.filling+k, desired+k
		return true, nil
	}
	n, err := a.releaseStopped(ctx, group, min(-gap, stopped))
	if changed = changed || n > 0; err != nil {
		return changed, err
	}
	if c := min(-gap-n, t.filling); c > 0 {
		// Launches still on their way that the tier no longer needs: the
		// group scales them in (recycle mode stops them, and a later
		// settle releases what is then beyond the target).
		if err := a.modifyDesired(ctx, group, desired-c); err != nil {
			return changed, err
		}
		t.filling, t.sent = t.filling-c, desired-c
		changed = true
	}
	return changed, nil
}

// recycleLaunched recycles up to filling of the group's serving members
// beyond the serving size that did not run before the tier's launches
// (ranBefore): the members the launches started or created. It takes the
// oldest of them first (CreatedTime, then listing order): a scale-out of
// the serving size after the tier's launch starts or creates its members
// later. It returns how many it recycled.
func (a *Actuator) recycleLaunched(ctx context.Context, group string, serving, filling int, ranBefore map[string]bool) (int, error) {
	in, err := a.members(ctx, group, "InService")
	if err != nil {
		return 0, err
	}
	launched := slices.DeleteFunc(slices.Clone(in), func(m *autoscaling.ScalingInstanceForDescribeScalingInstancesOutput) bool {
		return ranBefore[volcengine.StringValue(m.InstanceId)]
	})
	n := min(filling, len(in)-serving, len(launched))
	if n <= 0 {
		return 0, nil
	}
	slices.SortStableFunc(launched, func(x, y *autoscaling.ScalingInstanceForDescribeScalingInstancesOutput) int {
		return strings.Compare(volcengine.StringValue(x.CreatedTime), volcengine.StringValue(y.CreatedTime))
	})
	n, _, err = a.removeMembers(ctx, group, idsOf(launched[:n]), ReleaseRecycle, true)
	return n, err
}

// noteRunning records in t the group's members that run now (every
// status but Stopped), before the tier launches more, unless launches
// are already filling (the record of the first stands). Called with the
// group's lock held.
func (a *Actuator) noteRunning(ctx context.Context, group string, t *warmTier) error {
	if t.filling > 0 && t.ranBefore != nil {
		return nil
	}
	all, err := a.members(ctx, group, "")
	if err != nil {
		return err
	}
	t.ranBefore = map[string]bool{}
	for _, m := range all {
		if volcengine.StringValue(m.Status) != "Stopped" {
			t.ranBefore[volcengine.StringValue(m.InstanceId)] = true
		}
	}
	return nil
}

// releaseStopped releases up to n of the group's stopped members and
// returns how many it released. A stopped member is outside the desired
// size, so the desired size stays.
func (a *Actuator) releaseStopped(ctx context.Context, group string, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	stopped, err := a.members(ctx, group, "Stopped")
	if err != nil {
		return 0, err
	}
	n, _, err = a.removeMembers(ctx, group, idsOf(stopped[:min(n, len(stopped))]), removeRelease, false)
	return n, err
}

// removeRelease is RemoveInstances' RemoveMode that releases the instances.
const removeRelease = "release"

// removeMembers calls RemoveInstances for ids, at most maxRemove a call,
// and returns how many it removed and the last call's request ID.
func (a *Actuator) removeMembers(ctx context.Context, group string, ids []string, mode string, decreaseDesired bool) (done int, requestID string, err error) {
	for len(ids) > done {
		batch := ids[done:min(done+maxRemove, len(ids))]
		req, _ := a.as.RemoveInstancesRequest(&autoscaling.RemoveInstancesInput{
			ScalingGroupId:          volcengine.String(group),
			InstanceIds:             volcengine.StringSlice(batch),
			RemoveMode:              volcengine.String(mode),
			DecreaseDesiredCapacity: volcengine.Bool(decreaseDesired),
		})
		requestID, err = a.send(ctx, "RemoveInstances", req)
		report(ctx, requestID)
		if err != nil {
			return done, requestID, err
		}
		done += len(batch)
		a.log.DebugContext(ctx, "scaling group members removed", "scaling_group", group, "instances", batch, "remove_mode", mode, "request_id", requestID)
	}
	return done, requestID, nil
}

// modifyDesired sets only the group's DesireInstanceNumber.
func (a *Actuator) modifyDesired(ctx context.Context, group string, desired int) error {
	_, err := a.modifyGroup(ctx, group, volcengine.Int32(int32(desired)), nil)
	return err
}

// members lists the group's members in status, or all of them when
// status is "" (all pages).
func (a *Actuator) members(ctx context.Context, group, status string) ([]*autoscaling.ScalingInstanceForDescribeScalingInstancesOutput, error) {
	var out []*autoscaling.ScalingInstanceForDescribeScalingInstancesOutput
	var filter *string
	if status != "" {
		filter = volcengine.String(status)
	}
	seen := 0
	for page := int32(1); page <= maxPages; page++ {
		req, resp := a.as.DescribeScalingInstancesRequest(&autoscaling.DescribeScalingInstancesInput{
			ScalingGroupId: volcengine.String(group),
			Status:         filter,
			PageNumber:     volcengine.Int32(page),
			PageSize:       volcengine.Int32(pageSize),
		})
		if _, err := a.send(ctx, "DescribeScalingInstances", req); err != nil {
			return nil, err
		}
		for _, in := range resp.ScalingInstances {
			if in != nil && volcengine.StringValue(in.InstanceId) != "" && (status == "" || volcengine.StringValue(in.Status) == status) {
				out = append(out, in)
			}
		}
		seen += len(resp.ScalingInstances)
		if len(resp.ScalingInstances) == 0 || seen >= int(volcengine.Int32Value(resp.TotalCount)) {
			break
		}
	}
	return out, nil
}

func idsOf(in []*autoscaling.ScalingInstanceForDescribeScalingInstancesOutput) []string {
	ids := make([]string, len(in))
	for i, m := range in {
		ids[i] = volcengine.StringValue(m.InstanceId)
	}
	return ids
}
