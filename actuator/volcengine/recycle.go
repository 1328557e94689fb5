package volcengine

import (
	"context"
	"fmt"

	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
)

// RecycleMembers returns a with its Release changed for the members of
// the scaling groups of pools whose release_mode is recycle: such a member
// is removed from its group with Recycle, so that the group keeps it
// stopped (its compute no longer billed) and starts it first at the next
// scale-out, much sooner than it creates an instance. Every other
// instance is stopped as a's Release does. With no pool in recycle mode it
// returns a itself.
func RecycleMembers(a *Actuator, pools []actuator.PoolConfig) actuator.Actuator {
	var groups []string
	for _, p := range pools {
		if p.Backend != Name {
			continue
		}
		opts, _ := PoolOptions.Decode(p) // the pool spec has reported any problem
		if opts.String(OptReleaseMode) != ReleaseRecycle {
			continue
		}
		g := opts.String(OptScalingGroup)
		if g == "" {
			g = p.Name
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return a
	}
	return &recycling{Actuator: a, groups: groups}
}

// recycling is an Actuator whose Release recycles the members of groups.
type recycling struct {
	*Actuator
	groups []string
}

// Release recycles instanceID when it is a member of one of the groups
// (DescribeScalingInstances), and stops it otherwise. Either way the
// result is recorded for RecordStops.
func (r *recycling) Release(ctx context.Context, instanceID, reason string) error {
	for _, g := range r.groups {
		in, err := r.InScalingGroup(ctx, g, instanceID)
		if err != nil {
			return fmt.Errorf("checking whether %s is in scaling group %s: %w", instanceID, g, err)
		}
		if !in {
			continue
		}
		res, err := r.Recycle(ctx, g, instanceID, reason)
		if err == nil {
			if rec, ok := ctx.Value(stopsKey{}).(*stopRecorder); ok {
				rec.add(res)
			}
		}
		return err
	}
	return r.Actuator.Release(ctx, instanceID, reason)
}

// Recycle removes a member from its scaling group with RemoveInstances,
// RemoveMode=recycle and DecreaseDesiredCapacity, so that the group does
// not replace it: the group keeps it stopped and starts it first when it
// next scales out. RemoveInstances takes no ClientToken, so a retry after
// a lost reply may be refused as the instance's second removal. A group
// whose reply names another ScalingMode is refused first (checkRecycles).
func (a *Actuator) Recycle(ctx context.Context, group, instanceID, reason string) (StopResult, error) {
	res := StopResult{InstanceID: instanceID, Mode: ReleaseRecycle}
	if err := checkID("scaling group ID", group); err != nil {
		return res, err
	}
	if err := checkID("instance ID", instanceID); err != nil {
		return res, err
	}
	if err := a.checkRecycles(ctx, group); err != nil {
		return res, err
	}
	_, requestID, err := a.removeMembers(ctx, group, []string{instanceID}, ReleaseRecycle, true)
	res.RequestID = requestID
	if err != nil {
		return res, err
	}
	res.Note = fmt.Sprintf("instance %s recycled in scaling group %s: kept stopped in the group, which asks for one instance fewer "+
		"and starts it first at its next scale-out", instanceID, group)
	a.log.InfoContext(ctx, "instance recycled", "instance_id", instanceID, "scaling_group", group, "reason", reason, "request_id", res.RequestID)
	return res, nil
}

// checkRecycles refuses a group whose DescribeScalingGroups reply names a
// ScalingMode other than recycle: there RemoveInstances with
// RemoveMode=recycle releases the instance instead of stopping it (the
// RemoveInstances reference's table of ScalingMode and RemoveMode). A
// reply without ScalingMode (an older API) is let through.
func (a *Actuator) checkRecycles(ctx context.Context, group string) error {
	g, err := a.describeGroup(ctx, group)
	if err != nil {
		return err
	}
	if mode := volcengine.StringValue(g.ScalingMode); mode != "" && mode != ScalingModeRecycle {
		return fmt.Errorf("volcengine: %w: scaling group %s is in ScalingMode %q, where a recycle (RemoveMode=recycle) releases the instance "+
			"instead of keeping it stopped: set release_mode: stop for the pool, or use a group created in ScalingMode recycle",
			actuator.ErrRejected, group, a.red.Snippet(mode, 40))
	}
	return nil
}
