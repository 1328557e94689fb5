package volcengine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/volcengine/volcengine-go-sdk/service/autoscaling"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
	"github.com/prewarm/prewarm/planner"
)

// launchTimeLayout is the ScheduledPolicy.LaunchTime format (UTC, minutes).
const launchTimeLayout = "2006-01-02T15:04Z"

// pageSize is the page size of Describe* calls (the API's maximum).
const pageSize = 100

// maxPages stops a paging loop on a misbehaving API.
const maxPages = 100

// Capacity reads the scaling group's size with DescribeScalingGroups:
// Current is TotalInstanceCount less StoppedInstanceCount (a stopped member,
// released or recycled, serves nothing), Desired is DesireInstanceNumber
// (Current when the group has none), Min and Max are the group's own bounds;
// in a group of ScalingMode recycle, Stopped is StoppedInstanceCount (the
// warm tier a scale-out starts first), unknown in other groups.
// The ready members are ReadyInstances', a call of their own. With a warm
// tier (SetWarm), the launches on their way to it count in neither Current
// nor Desired: they are not the serving size SetDesired asked for (unless
// the group's desired size was set elsewhere since, which the next
// SettleWarm notes); nor do the members of a probe for spot (SettleSpot)
// beyond the serving size. Capacity only reads: the warm tier is settled,
// and stand-ins moved back to spot, on the write path (SetWarm,
// SettleWarm, SettleSpot).
func (a *Actuator) Capacity(ctx context.Context, pool string) (actuator.Capacity, error) {
	if err := checkID("scaling group ID", pool); err != nil {
		return actuator.Capacity{}, err
	}
	g, err := a.describeGroup(ctx, pool)
	if err != nil {
		return actuator.Capacity{}, err
	}
	total, stopped := volcengine.Int32Value(g.TotalInstanceCount), volcengine.Int32Value(g.StoppedInstanceCount)
	lo, hi := volcengine.Int32Value(g.MinInstanceNumber), volcengine.Int32Value(g.MaxInstanceNumber)
	if total < 0 || stopped < 0 || lo < 0 || hi < 0 {
		// A count no group can have: a broken reply, not a size to act on.
		return actuator.Capacity{}, &APIError{Action: "DescribeScalingGroups", Code: codeMalformedResponse,
			Message: fmt.Sprintf("scaling group %s: negative counts in the reply (TotalInstanceCount %d, StoppedInstanceCount %d, MinInstanceNumber %d, MaxInstanceNumber %d)",
				pool, total, stopped, lo, hi),
			HTTPStatus: 200, Kind: actuator.ErrTransient}
	}
	filling := a.filling(pool, g)
	c := actuator.Capacity{
		Current: max(int(total-stopped)-filling, 0),
		Min:     int(volcengine.Int32Value(g.MinInstanceNumber)),
		Max:     int(volcengine.Int32Value(g.MaxInstanceNumber)),
	}
	if volcengine.StringValue(g.ScalingMode) == ScalingModeRecycle {
		// Only a recycle-mode group starts its stopped members at a
		// scale-out; another group's stopped members (released with
		// StopInstances) stay stopped, so none of its starts is warm.
		c.Stopped, c.StoppedKnown = int(stopped), true
	}
	c.Desired = c.Current
	if g.DesireInstanceNumber != nil && *g.DesireInstanceNumber >= 0 {
		c.Desired = max(int(*g.DesireInstanceNumber)-filling, 0)
	}
	return c, nil
}

// filling is how many of group g's members (as just read) are beyond
// the serving size SetDesired asked for: the warm tier's launches on their
// way (those SetWarm's tier holds) and a probe's for spot (SettleSpot's),
// none of either when the group's desired size is no longer the one this
// Actuator sent (it was set elsewhere). It changes nothing.
func (a *Actuator) filling(pool string, g *autoscaling.ScalingGroupForDescribeScalingGroupsOutput) int {
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	n := probeExtra(gs, g)
	if t := gs.warm; t != nil && t.filling > 0 && int(volcengine.Int32Value(g.DesireInstanceNumber)) == t.sent {
		n += t.filling
	}
	return n
}

// modifyGroup is the one ModifyScalingGroup call: it sets the group's
// DesireInstanceNumber (nil: left as it is) and its InstancesDistribution
// (nil: left as it is), and returns the request ID.
func (a *Actuator) modifyGroup(ctx context.Context, group string, desired *int32, d *Distribution) (string, error) {
	req, _ := a.as.ModifyScalingGroupRequest(&autoscaling.ModifyScalingGroupInput{
		ScalingGroupId:        volcengine.String(group),
		DesireInstanceNumber:  desired,
		InstancesDistribution: d.input(),
	})
	requestID, err := a.send(ctx, "ModifyScalingGroup", req)
	report(ctx, requestID)
	return requestID, err
}

// ReadyInstances implements actuator.ReadyCounter: it counts the group's
// members that serve (Status InService, not Pending while they boot) with
// one DescribeScalingInstances of a single row, whose TotalCount is the
// count: the ready instances the pool's start times are measured from.
// ok is false when the call fails.
func (a *Actuator) ReadyInstances(ctx context.Context, group string) (int, bool) {
	if checkID("scaling group ID", group) != nil {
		return 0, false
	}
	req, out := a.as.DescribeScalingInstancesRequest(&autoscaling.DescribeScalingInstancesInput{
		ScalingGroupId: volcengine.String(group),
		Status:         volcengine.String("InService"),
		PageSize:       volcengine.Int32(1),
	})
	requestID, err := a.send(ctx, "DescribeScalingInstances", req)
	report(ctx, requestID)
	if err != nil || out.TotalCount == nil || *out.TotalCount < 0 {
		return 0, false
	}
	return int(*out.TotalCount), true
}

func (a *Actuator) describeGroup(ctx context.Context, id string) (*autoscaling.ScalingGroupForDescribeScalingGroupsOutput, error) {
	req, out := a.as.DescribeScalingGroupsRequest(&autoscaling.DescribeScalingGroupsInput{
		ScalingGroupIds: volcengine.StringSlice([]string{id}),
	})
	requestID, err := a.send(ctx, "DescribeScalingGroups", req)
	report(ctx, requestID)
	if err != nil {
		return nil, err
	}
	for _, g := range out.ScalingGroups {
		if g != nil && volcengine.StringValue(g.ScalingGroupId) == id {
			return g, nil
		}
	}
	return nil, &APIError{Action: "DescribeScalingGroups", Code: "InvalidScalingGroup.NotFound",
		Message:   fmt.Sprintf("scaling group %s not found in region %s", id, a.region),
		RequestID: requestID, HTTPStatus: 200, Kind: actuator.ErrRejected}
}

// SetDesired sets the group's DesireInstanceNumber with ModifyScalingGroup,
// and its InstancesDistribution when the plan's spot tier (SetSpot) or
// Options.Distribution gives one (mixOf). The warm tier's launches on
// their way (SetWarm) and a probe's for spot (SettleSpot) are added to the
// size sent, and give way where the sum would pass the group's max.
// The API has no reason field nor ClientToken; the reason goes to the log
// (and Safe's audit log). Setting the same value twice is harmless.
func (a *Actuator) SetDesired(ctx context.Context, pool string, desired int, reason string) error {
	if err := checkID("scaling group ID", pool); err != nil {
		return err
	}
	if desired < 0 || desired > math.MaxInt32 {
		return fmt.Errorf("volcengine: %w: desired %d out of range", actuator.ErrRejected, desired)
	}
	gs := a.group(pool)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	send, t, pr := desired, gs.warm, gs.back.probe
	if t != nil && t.filling > 0 {
		send = min(desired+t.filling, max(desired, t.max))
		t.filling = send - desired
	}
	if pr != nil {
		held := send
		send = min(held+pr.extra, max(held, pr.max))
		pr.extra = send - held
	}
	requestID, err := a.modifyGroup(ctx, pool, volcengine.Int32(int32(send)), a.mixFor(gs))
	if err != nil {
		return err
	}
	if t != nil {
		t.sent = send
	}
	if pr != nil {
		pr.base, pr.sent = desired, send
	}
	a.log.InfoContext(ctx, "scaling group desired capacity set", "pool", pool, "desired", desired,
		"reason", reason, "request_id", requestID)
	return nil
}

// Activity is one scaling activity of a group, as DescribeScalingActivities
// reports it: what the group did after a change, for audit.
type Activity struct {
	ID string
	// Type is ActivityType (e.g. ShrinkOrExpand, Alarm, Scheduled).
	Type string
	// Status is StatusCode (Init, Running, Success, PartialSuccess, Error,
	// Rejected, Exception).
	Status string
	// CurrentInstances is CurrentInstanceNumber when the activity began;
	// Adjusted is ActualAdjustInstanceNumber.
	CurrentInstances, Adjusted int
	// CreatedAt and StoppedAt as the API writes them (RFC 3339 UTC).
	CreatedAt, StoppedAt string
	// Message is ResultMsg.
	Message string
}

// Activities returns the group's scaling activities, newest first as the
// API orders them, at most limit (all pages up to limit; limit ≤ 0 means
// 100).
func (a *Actuator) Activities(ctx context.Context, pool string, limit int) ([]Activity, error) {
	if err := checkID("scaling group ID", pool); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 100
	}
	var out []Activity
	seen := 0
	for page := int32(1); page <= maxPages && len(out) < limit; page++ {
		req, resp := a.as.DescribeScalingActivitiesRequest(&autoscaling.DescribeScalingActivitiesInput{
			ScalingGroupId: volcengine.String(pool),
			PageNumber:     volcengine.Int32(page),
			PageSize:       volcengine.Int32(int32(min(pageSize, limit))),
		})
		if _, err := a.send(ctx, "DescribeScalingActivities", req); err != nil {
			return out, err
		}
		for _, act := range resp.ScalingActivities {
			if act == nil || len(out) == limit {
				continue
			}
			out = append(out, Activity{
				ID:               volcengine.StringValue(act.ScalingActivityId),
				Type:             volcengine.StringValue(act.ActivityType),
				Status:           volcengine.StringValue(act.StatusCode),
				CurrentInstances: int(volcengine.Int32Value(act.CurrentInstanceNumber)),
				Adjusted:         int(volcengine.Int32Value(act.ActualAdjustInstanceNumber)),
				CreatedAt:        volcengine.StringValue(act.CreatedAt),
				StoppedAt:        volcengine.StringValue(act.StoppedAt),
				Message:          volcengine.StringValue(act.ResultMsg),
			})
		}
		seen += len(resp.ScalingActivities)
		if len(resp.ScalingActivities) == 0 || seen >= int(volcengine.Int32Value(resp.TotalCount)) {
			break
		}
	}
	return out, nil
}

// ScheduledPolicy is a policy as PublishSchedule plans and lists it.
type ScheduledPolicy struct {
	ID, Name   string
	LaunchTime time.Time
	Desired    int
	Status     string
}

// PublishSchedule mirrors the future steps of a schedule as Scheduled
// scaling policies (AdjustmentType TotalCapacity) named
// "<prefix><yyyymmddThhmm>Z-<desired>-<generation>", and removes the
// policies an earlier PublishSchedule created. Policies whose name lacks the
// prefix are never touched.
//
// Order, so a failure never leaves the group without a schedule: list ours,
// create and enable the new ones, then delete the old ones. If creating
// fails, the new policies made so far are deleted again (best effort) and
// the old schedule stays. Steps at or before now+MinLead are skipped, steps
// in the same minute collapse to the last, steps that do not change the
// size are dropped, and at most MaxScheduledPolicies are published.
func (a *Actuator) PublishSchedule(ctx context.Context, pool string, steps planner.Schedule) error {
	if err := checkID("scaling group ID", pool); err != nil {
		return err
	}
	plan, err := a.planPolicies(steps)
	if err != nil {
		return err
	}
	old, err := a.ownPolicies(ctx, pool)
	if err != nil {
		return err
	}
	generation := token(ctx, "")
	if len(generation) > 6 {
		generation = generation[:6]
	}
	var created []string
	for _, p := range plan {
		name := fmt.Sprintf("%s%sZ-%d-%s", a.opts.PolicyPrefix, p.LaunchTime.UTC().Format("20060102T1504"), p.Desired, generation)
		id, err := a.createPolicy(ctx, pool, name, p)
		if err == nil {
			created = append(created, id)
			err = a.enablePolicy(ctx, id)
		}
		if err != nil {
			a.rollback(ctx, created)
			return fmt.Errorf("publishing schedule for %s (previous schedule kept): %w", pool, err)
		}
	}
	var errs []error
	for _, p := range old {
		if err := a.deletePolicy(ctx, p.ID); err != nil {
			errs = append(errs, fmt.Errorf("deleting old policy %s (%s): %w", p.Name, p.ID, err))
		}
	}
	a.log.InfoContext(ctx, "schedule published as scheduled scaling policies", "pool", pool,
		"created", len(created), "deleted", len(old)-len(errs), "steps", len(steps))
	return errors.Join(errs...)
}

// planPolicies turns steps into the policies to create.
func (a *Actuator) planPolicies(steps planner.Schedule) ([]ScheduledPolicy, error) {
	earliest := a.opts.Now().Add(a.opts.MinLead)
	byMinute := map[time.Time]int{}
	for i, s := range steps {
		if s.Desired < 0 || s.Desired > math.MaxInt32 {
			return nil, fmt.Errorf("volcengine: %w: step %d (%s): desired %d out of range", actuator.ErrRejected, i, s.At.Format(time.RFC3339), s.Desired)
		}
		if !s.At.After(earliest) {
			continue
		}
		byMinute[s.At.UTC().Truncate(time.Minute)] = s.Desired
	}
	var plan []ScheduledPolicy
	for at, d := range byMinute {
		plan = append(plan, ScheduledPolicy{LaunchTime: at, Desired: d})
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].LaunchTime.Before(plan[j].LaunchTime) })
	// Drop steps that repeat the previous size: they would do nothing.
	var out []ScheduledPolicy
	for i, p := range plan {
		if i > 0 && p.Desired == plan[i-1].Desired {
			continue
		}
		out = append(out, p)
	}
	if len(out) > a.opts.MaxScheduledPolicies {
		a.log.Info("schedule truncated to the policy limit; later steps follow on the next publish",
			"steps", len(out), "limit", a.opts.MaxScheduledPolicies)
		out = out[:a.opts.MaxScheduledPolicies]
	}
	return out, nil
}

// ScheduledPolicies lists the policies of the group that prewarm created
// (name starts with the prefix), in name order.
func (a *Actuator) ScheduledPolicies(ctx context.Context, pool string) ([]ScheduledPolicy, error) {
	if err := checkID("scaling group ID", pool); err != nil {
		return nil, err
	}
	return a.ownPolicies(ctx, pool)
}

func (a *Actuator) ownPolicies(ctx context.Context, pool string) ([]ScheduledPolicy, error) {
	var out []ScheduledPolicy
	seen := 0
	for page := int32(1); page <= maxPages; page++ {
		req, resp := a.as.DescribeScalingPoliciesRequest(&autoscaling.DescribeScalingPoliciesInput{
			ScalingGroupId:    volcengine.String(pool),
			ScalingPolicyType: volcengine.String("Scheduled"),
			PageNumber:        volcengine.Int32(page),
			PageSize:          volcengine.Int32(pageSize),
		})
		if _, err := a.send(ctx, "DescribeScalingPolicies", req); err != nil {
			return nil, err
		}
		for _, p := range resp.ScalingPolicies {
			if p == nil {
				continue
			}
			name := volcengine.StringValue(p.ScalingPolicyName)
			if !strings.HasPrefix(name, a.opts.PolicyPrefix) || volcengine.StringValue(p.ScalingPolicyType) != "Scheduled" {
				continue
			}
			sp := ScheduledPolicy{
				ID: volcengine.StringValue(p.ScalingPolicyId), Name: name,
				Desired: int(volcengine.Int32Value(p.AdjustmentValue)), Status: volcengine.StringValue(p.Status),
			}
			if p.ScheduledPolicy != nil {
				sp.LaunchTime, _ = time.Parse(launchTimeLayout, volcengine.StringValue(p.ScheduledPolicy.LaunchTime))
			}
			out = append(out, sp)
		}
		seen += len(resp.ScalingPolicies)
		if len(resp.ScalingPolicies) == 0 || seen >= int(volcengine.Int32Value(resp.TotalCount)) {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (a *Actuator) createPolicy(ctx context.Context, pool, name string, p ScheduledPolicy) (string, error) {
	req, out := a.as.CreateScalingPolicyRequest(&autoscaling.CreateScalingPolicyInput{
		ScalingGroupId:    volcengine.String(pool),
		ScalingPolicyName: volcengine.String(name),
		ScalingPolicyType: volcengine.String("Scheduled"),
		AdjustmentType:    volcengine.String("TotalCapacity"),
		AdjustmentValue:   volcengine.Int32(int32(p.Desired)),
		ScheduledPolicy: &autoscaling.ScheduledPolicyForCreateScalingPolicyInput{
			LaunchTime: volcengine.String(p.LaunchTime.UTC().Format(launchTimeLayout)),
		},
	})
	requestID, err := a.send(ctx, "CreateScalingPolicy", req)
	report(ctx, requestID)
	if err != nil {
		return "", err
	}
	id := volcengine.StringValue(out.ScalingPolicyId)
	if id == "" {
		return "", &APIError{Action: "CreateScalingPolicy", Code: "MalformedResponse",
			Message: "no ScalingPolicyId in the reply", RequestID: requestID, HTTPStatus: 200, Kind: actuator.ErrTransient}
	}
	return id, nil
}

func (a *Actuator) enablePolicy(ctx context.Context, id string) error {
	req, _ := a.as.EnableScalingPolicyRequest(&autoscaling.EnableScalingPolicyInput{ScalingPolicyId: volcengine.String(id)})
	_, err := a.send(ctx, "EnableScalingPolicy", req)
	return err
}

func (a *Actuator) deletePolicy(ctx context.Context, id string) error {
	req, _ := a.as.DeleteScalingPolicyRequest(&autoscaling.DeleteScalingPolicyInput{ScalingPolicyId: volcengine.String(id)})
	_, err := a.send(ctx, "DeleteScalingPolicy", req)
	return err
}

// rollback deletes policies created by a failed publish, on a context that
// survives the caller's cancellation for a short while.
func (a *Actuator) rollback(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, id := range ids {
		if err := a.deletePolicy(ctx, id); err != nil {
			a.log.WarnContext(ctx, "could not delete a policy of a failed publish; delete it by hand",
				"policy_id", id, "err", err)
		}
	}
}

// InScalingGroup reports whether instanceID is a member of the scaling group,
// with DescribeScalingInstances.
func (a *Actuator) InScalingGroup(ctx context.Context, group, instanceID string) (bool, error) {
	if err := checkID("scaling group ID", group); err != nil {
		return false, err
	}
	if err := checkID("instance ID", instanceID); err != nil {
		return false, err
	}
	req, out := a.as.DescribeScalingInstancesRequest(&autoscaling.DescribeScalingInstancesInput{
		ScalingGroupId: volcengine.String(group),
		InstanceIds:    volcengine.StringSlice([]string{instanceID}),
	})
	if _, err := a.send(ctx, "DescribeScalingInstances", req); err != nil {
		return false, err
	}
	for _, in := range out.ScalingInstances {
		if in != nil && volcengine.StringValue(in.InstanceId) == instanceID {
			return true, nil
		}
	}
	return false, nil
}
