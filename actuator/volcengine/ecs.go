package volcengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/volcengine/volcengine-go-sdk/service/ecs"
	"github.com/volcengine/volcengine-go-sdk/volcengine"

	"github.com/prewarm/prewarm/actuator"
)

// Stopped modes of StopInstances.
const (
	// StopCharging (economical mode) releases vCPU, memory and GPU and stops
	// billing them; disks and EIPs stay billed. Starting again may fail when
	// the zone is out of stock.
	StopCharging = "StopCharging"
	// KeepCharging keeps the instance's resources, and its bill.
	KeepCharging = "KeepCharging"
)

// StopResult says how an instance was stopped.
type StopResult struct {
	InstanceID string
	// Mode is StopCharging, or KeepCharging after a fallback.
	Mode string
	// Fallback is true when the instance refused StopCharging and was
	// stopped with KeepCharging: it goes on costing money.
	Fallback bool
	// Note is a sentence for people (CLI output, HTTP reply, logs).
	Note string
	// RequestID of the StopInstances call that stopped it.
	RequestID string
}

// Stop stops one instance with StopInstances and StoppedMode=StopCharging.
// When the instance refuses StopCharging (instance types with local disks,
// subscription instances, accounts without economical mode) it stops it
// with KeepCharging instead, logs a warning and says so in the result,
// unless Options.NoStopChargingFallback is set. Each request carries a
// ClientToken derived from the call's idempotency token, so a retried call
// stops the instance once.
func (a *Actuator) Stop(ctx context.Context, instanceID, reason string) (StopResult, error) {
	res := StopResult{InstanceID: instanceID, Mode: StopCharging}
	if err := checkID("instance ID", instanceID); err != nil {
		return res, err
	}
	requestID, err := a.stopInstance(ctx, instanceID, StopCharging, token(ctx, "sc"))
	var apiErr *APIError
	if err != nil && errors.As(err, &apiErr) && errors.Is(err, actuator.ErrRejected) && refusesStopCharging(apiErr.Code) {
		if a.opts.NoStopChargingFallback {
			return res, fmt.Errorf("%w (falling back to KeepCharging is disabled)", err)
		}
		res.Mode, res.Fallback = KeepCharging, true
		res.Note = fmt.Sprintf("instance %s refused StoppedMode=StopCharging (%s: %s); stopped it with KeepCharging instead, so its compute stays billed while stopped",
			instanceID, apiErr.Code, apiErr.Message)
		a.log.WarnContext(ctx, "StopCharging refused; falling back to KeepCharging (instance stays billed)",
			"instance_id", instanceID, "code", apiErr.Code, "request_id", apiErr.RequestID)
		requestID, err = a.stopInstance(ctx, instanceID, KeepCharging, token(ctx, "kc"))
	}
	res.RequestID = requestID
	report(ctx, requestID)
	if err != nil {
		return res, err
	}
	if !res.Fallback {
		res.Note = fmt.Sprintf("instance %s stopped with StopCharging: compute billing stops, disks and EIPs stay billed", instanceID)
	}
	a.log.InfoContext(ctx, "instance stopped", "instance_id", instanceID, "stopped_mode", res.Mode,
		"fallback", res.Fallback, "reason", reason, "request_id", requestID)
	return res, nil
}

// refusesStopCharging recognises the refusal of StoppedMode=StopCharging
// by the error code alone (ResponseMetadata.Error.Code, or the
// per-instance OperationDetails code), never by the message: a gateway or
// an error page may quote the request, which always contains
// "StoppedMode=StopCharging", and a message match would then stop the
// instance with KeepCharging, leaving it billed. The refusal's code is not
// published (the StopInstances error table lists only
// InvalidStoppedMode.Malformed, for a bad value); since prewarm always
// sends the valid literal, any code naming the stopped mode or economical
// mode (InvalidStoppedMode.*, UnsupportedOperation.StoppedMode,
// OperationDenied.StopCharging, ...) is taken as one. See
// docs/volcengine.md.
func refusesStopCharging(code string) bool {
	c := strings.ToLower(code)
	for _, s := range []string{"stoppedmode", "stopcharging", "economical"} {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

// stopInstance calls StopInstances for one instance and turns its
// per-instance OperationDetails error, if any, into an APIError.
func (a *Actuator) stopInstance(ctx context.Context, instanceID, mode, clientToken string) (string, error) {
	req, out := a.ecs.StopInstancesRequest(&ecs.StopInstancesInput{
		InstanceIds: volcengine.StringSlice([]string{instanceID}),
		StoppedMode: volcengine.String(mode),
		ClientToken: volcengine.String(clientToken),
	})
	requestID, err := a.send(ctx, "StopInstances", req)
	if err != nil {
		return requestID, err
	}
	for _, d := range out.OperationDetails {
		if d != nil && d.Error != nil && volcengine.StringValue(d.Error.Code) != "" {
			code := a.red.Snippet(volcengine.StringValue(d.Error.Code), 128)
			return requestID, &APIError{Action: "StopInstances", Code: code, Message: a.red.Snippet(volcengine.StringValue(d.Error.Message), maxMessageBytes),
				RequestID: requestID, HTTPStatus: 200, Kind: classify(0, code)}
		}
	}
	return requestID, nil
}

// Release implements actuator.Actuator: it stops the instance (see Stop).
// The StopResult is recorded for RecordStops.
func (a *Actuator) Release(ctx context.Context, instanceID, reason string) error {
	res, err := a.Stop(ctx, instanceID, reason)
	if err == nil {
		if rec, ok := ctx.Value(stopsKey{}).(*stopRecorder); ok {
			rec.add(res)
		}
	}
	return err
}

// Start starts stopped instances with StartInstances (one ClientToken for
// the batch). Per-instance failures are joined into the error.
func (a *Actuator) Start(ctx context.Context, instanceIDs ...string) error {
	if len(instanceIDs) == 0 {
		return nil
	}
	for _, id := range instanceIDs {
		if err := checkID("instance ID", id); err != nil {
			return err
		}
	}
	req, out := a.ecs.StartInstancesRequest(&ecs.StartInstancesInput{
		InstanceIds: volcengine.StringSlice(instanceIDs),
		ClientToken: volcengine.String(token(ctx, "start")),
	})
	requestID, err := a.send(ctx, "StartInstances", req)
	report(ctx, requestID)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range out.OperationDetails {
		if d != nil && d.Error != nil && volcengine.StringValue(d.Error.Code) != "" {
			code := a.red.Snippet(volcengine.StringValue(d.Error.Code), 128)
			errs = append(errs, fmt.Errorf("instance %s: %w", a.red.Snippet(volcengine.StringValue(d.InstanceId), 128),
				&APIError{Action: "StartInstances", Code: code, Message: a.red.Snippet(volcengine.StringValue(d.Error.Message), maxMessageBytes),
					RequestID: requestID, HTTPStatus: 200, Kind: classify(0, code)}))
		}
	}
	if len(errs) == 0 {
		a.log.InfoContext(ctx, "instances started", "instance_ids", instanceIDs, "request_id", requestID)
	}
	return errors.Join(errs...)
}

// stopsKey carries a *stopRecorder in a context.
type stopsKey struct{}

type stopRecorder struct {
	mu      sync.Mutex
	results []StopResult
}

func (r *stopRecorder) add(res StopResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
}

// RecordStops returns a context in which Release records how it stopped
// each instance, and a function returning those results. It works through
// wrappers such as actuator.Safe, which pass the context on, so callers of
// the plain Actuator interface can still report a KeepCharging fallback.
func RecordStops(ctx context.Context) (context.Context, func() []StopResult) {
	rec := &stopRecorder{}
	return context.WithValue(ctx, stopsKey{}, rec), func() []StopResult {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return append([]StopResult(nil), rec.results...)
	}
}

// NoteRecorder is RecordStops reduced to the notes, joined by "; ", in the
// shape releasehook.Config.Notes expects.
func NoteRecorder(ctx context.Context) (context.Context, func() string) {
	ctx, get := RecordStops(ctx)
	return ctx, func() string {
		var notes []string
		for _, r := range get() {
			notes = append(notes, r.Note)
		}
		return strings.Join(notes, "; ")
	}
}
