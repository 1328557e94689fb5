package volcenginetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prewarm/prewarm/internal/secrettest"
)

// Default credentials and region the fake expects. Tests that check secrets
// never leak grep their output for DefaultSecretKey.
const (
	DefaultAccessKey = "AKLTfakeaccesskey0001"
	DefaultSecretKey = "fake-secret-NEVER-LOG-ME-7f3a9c"
	DefaultRegion    = "cn-beijing"
)

// API versions of the two services the fake speaks.
const (
	AutoScalingVersion = "2020-01-01"
	ECSVersion         = "2020-04-01"
)

// Signing names (the service part of the credential scope) the SDK uses.
const (
	serviceAutoScaling = "auto_scaling"
	serviceECS         = "ecs"
)

// Call is one request the fake received, recorded before it was answered.
type Call struct {
	// Service is the signing service from the credential scope
	// ("auto_scaling" or "ecs").
	Service string
	Action  string
	Version string
	// Region is the region from the credential scope.
	Region string
	// Params are the query (and form) parameters, Action and Version
	// included.
	Params url.Values
	// Authorization is the raw header.
	Authorization string
	// SignatureErr is nil when the Authorization header carried a valid
	// signature for the fake's credentials.
	SignatureErr error
	// At is when the request arrived.
	At time.Time
}

// Reply is a scripted answer queued with Fail.
type Reply struct {
	// Status is the HTTP status; 400 when zero and Code is set.
	Status int
	// Code and Message fill ResponseMetadata.Error.
	Code, Message string
	// Body, when set, is sent verbatim instead of an envelope (a proxy's
	// HTML error page, truncated JSON, ...).
	Body string
	// Delay holds the reply back (to trigger client timeouts).
	Delay time.Duration
	// Echo appends the request (method, URL, headers, body; raw,
	// URL-escaped and in base64) to Message, or to Body, as a gateway
	// quoting the request it refused does: the secrets tests use it.
	Echo bool
}

// The values of Group.ScalingMode.
const (
	// ScalingModeRelease (the API's default) releases what a scale-in
	// removes and creates every instance a scale-out adds.
	ScalingModeRelease = "release"
	// ScalingModeRecycle stops what a scale-in removes, in economical
	// mode, and keeps it in the group; a scale-out starts those stopped
	// members first (in WarmStart) before it creates instances.
	ScalingModeRecycle = "recycle"
)

// Group is a scaling group of the model.
type Group struct {
	ID, Name          string
	Min, Max, Desired int
	LifecycleState    string
	// ScalingMode is ScalingModeRelease or ScalingModeRecycle, as the API
	// sets it when the group is created; "" is not reported and behaves as
	// release.
	ScalingMode string
	// InstanceIDs are the members in launch order, stopped ones included.
	InstanceIDs        []string
	DesiredWasModified int // how many times ModifyScalingGroup changed Desired
	// Distribution is the group's InstancesDistribution, as
	// ModifyScalingGroup last set it (nil: never set).
	Distribution *Distribution
}

// Distribution is a group's InstancesDistribution.
type Distribution struct {
	OnDemandBaseCapacity, OnDemandPercentageAboveBaseCapacity int
	SpotInstanceRemedy, CompensateWithOnDemand                bool
}

// The values of an ECS instance's SpotStrategy (DescribeInstances) the
// model reports: a spot instance bid at the market price (what a group's
// spot launch gets in the model), and an on-demand one.
const (
	SpotStrategyAsPriceGo = "SpotAsPriceGo"
	SpotStrategyNone      = "NoSpot"
)

// Policy is a scaling policy of the model.
type Policy struct {
	ID, GroupID, Name string
	Type              string // Scheduled, Recurrence, Alarm
	AdjustmentType    string
	AdjustmentValue   int
	LaunchTime        string
	Status            string // InActive, Active
}

// Instance is an ECS instance of the model.
type Instance struct {
	ID string
	// Status is RUNNING or STOPPED, where the instance is going;
	// DescribeInstances reports STARTING or STOPPING until ReadyAt.
	Status string
	// StoppedMode is the mode of the last stop.
	StoppedMode string
	// RefusesStopCharging makes StopInstances with StoppedMode=StopCharging
	// fail for this instance (as for local-disk instance types), with the
	// code and message of StopChargingRefusal.
	RefusesStopCharging bool
	// ReadyAt is when the instance serves (BootDelay after its launch,
	// WarmStart after a stopped member of a recycle-mode group starts,
	// StartDelay after StartInstances), or, stopped, when it has stopped
	// (StopDelay after StopInstances).
	ReadyAt time.Time
	// Spot marks a member the group launched on spot capacity (its
	// InstancesDistribution asked for it and the zone had stock).
	// DescribeInstances reports it as the instance's SpotStrategy:
	// SpotStrategyAsPriceGo, or SpotStrategyNone on demand.
	Spot bool
	// CreatedAt is when the group launched it (DescribeScalingInstances'
	// CreatedTime).
	CreatedAt time.Time
	// ReclaimAt, when set, is when the cloud reclaims a spot member that
	// an interruption (Interrupt) gave notice to while its group had
	// SpotInstanceRemedy on: the member serves until then, beside the
	// replacement the group launched at the notice, no longer counts
	// towards the group's size, and leaves the group (released) at
	// ReclaimAt, when its replacement serves.
	ReclaimAt time.Time
}

// Activity is a scaling activity of the model.
type Activity struct {
	ID, GroupID, Type, Status string
	From, To                  int
	CreatedAt                 time.Time
}

// Server is the fake OpenAPI. Its fields may be changed before the first
// request; afterwards use its methods, which lock.
type Server struct {
	*httptest.Server

	AccessKey, SecretKey, Region string
	// StopChargingRefusal is the error the fake answers, per instance in
	// OperationDetails, when an instance refuses StopCharging. The real
	// code is not documented; see docs/volcengine.md.
	StopChargingRefusal Reply
	// PageSizeLimit caps PageSize in Describe* calls (default 10, as the
	// real API's default page) so callers must page.
	PageSizeLimit int
	// Now is the fake's clock for signature freshness and activities.
	Now func() time.Time
	// BootDelay is how long an instance a scale-out creates is Pending
	// before it serves (InService in DescribeScalingInstances); 0: at once.
	BootDelay time.Duration
	// BootClock dates the boots (nil: Now). Tests that move time by hand
	// set it apart from Now, which signatures are checked against.
	BootClock func() time.Time
	// WarmStart is how long a stopped member of a recycle-mode group,
	// started by a scale-out, takes to serve: its disk keeps the image and
	// the weights. 0: at once.
	WarmStart time.Duration
	// StartDelay is how long an instance StartInstances starts is
	// STARTING (DescribeInstances) before it is RUNNING; StopDelay how
	// long one StopInstances stops is STOPPING before it is STOPPED. Both
	// run on the boots' clock; 0: at once.
	StartDelay, StopDelay time.Duration

	mu         sync.Mutex
	calls      []Call
	faults     map[string][]Reply
	groups     map[string]*Group
	policies   map[string]*Policy
	instances  map[string]*Instance
	activities []Activity
	// spotOut holds the groups whose zone has run out of spot capacity
	// (StockOut) until SpotReturns.
	spotOut map[string]bool
	tokens  map[string]tokenUse
	nextID  int
	onCall  func(Call)
}

type tokenUse struct {
	params string
	body   []byte
}

// New starts a fake on 127.0.0.1 with the default credentials and region.
// Close it when done (t.Cleanup(s.Close)).
func New() *Server {
	s := &Server{
		AccessKey: DefaultAccessKey,
		SecretKey: DefaultSecretKey,
		Region:    DefaultRegion,
		StopChargingRefusal: Reply{
			Code:    "UnsupportedOperation.StoppedMode",
			Message: "The specified instance type does not support StoppedMode StopCharging.",
		},
		PageSizeLimit: 10,
		Now:           time.Now,
		faults:        map[string][]Reply{},
		groups:        map[string]*Group{},
		policies:      map[string]*Policy{},
		instances:     map[string]*Instance{},
		spotOut:       map[string]bool{},
		tokens:        map[string]tokenUse{},
	}
	s.Server = httptest.NewServer(s)
	return s
}

// OnCall registers f to run (outside the lock) for every request after it is
// recorded; tests use it to timestamp arrivals.
func (s *Server) OnCall(f func(Call)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCall = f
}

// Fail queues replies for action ("*" for any action); each request of that
// action takes the next one instead of the model's answer.
func (s *Server) Fail(action string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[action] = append(s.faults[action], replies...)
}

// Calls returns the recorded requests of action ("" for all), oldest first.
func (s *Server) Calls(action string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if action == "" || c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// AddGroup adds a scaling group; instance IDs listed become its members and
// running ECS instances.
func (s *Server) AddGroup(g Group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.LifecycleState == "" {
		g.LifecycleState = "InService"
	}
	for _, id := range g.InstanceIDs {
		if _, ok := s.instances[id]; !ok {
			s.instances[id] = &Instance{ID: id, Status: "RUNNING"}
		}
	}
	s.groups[g.ID] = &g
}

// Group returns a copy of a scaling group.
func (s *Server) Group(id string) (Group, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	g, ok := s.groups[id]
	if !ok {
		return Group{}, false
	}
	return *g, true
}

// AddPolicy adds a scaling policy (to show prewarm leaves others alone).
// The ID is assigned when empty; it is returned.
func (s *Server) AddPolicy(p Policy) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.ID == "" {
		p.ID = s.newID("sp")
	}
	if p.Status == "" {
		p.Status = "Active"
	}
	s.policies[p.ID] = &p
	return p.ID
}

// Policies returns copies of the group's policies sorted by name.
func (s *Server) Policies(groupID string) []Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Policy
	for _, p := range s.policies {
		if p.GroupID == groupID {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AddInstance adds an ECS instance (running unless Status says otherwise).
func (s *Server) AddInstance(in Instance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.Status == "" {
		in.Status = "RUNNING"
	}
	s.instances[in.ID] = &in
}

// Instance returns a copy of an ECS instance.
func (s *Server) Instance(id string) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reap()
	in, ok := s.instances[id]
	if !ok {
		return Instance{}, false
	}
	return *in, true
}

// ServeHTTP implements the gateway: authenticate, route, answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	params := r.URL.Query()
	if r.Method == http.MethodPost {
		if form, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range form {
				params[k] = append(params[k], v...)
			}
		}
	}
	auth := verifyRequest(r, body, s.AccessKey, s.SecretKey, s.Region, s.Now())
	call := Call{
		Service:       auth.service,
		Action:        params.Get("Action"),
		Version:       params.Get("Version"),
		Region:        auth.region,
		Params:        params,
		Authorization: r.Header.Get("Authorization"),
		SignatureErr:  auth.err,
		At:            time.Now(),
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	hook := s.onCall
	s.mu.Unlock()
	if hook != nil {
		hook(call)
	}

	meta := metadata{RequestId: s.requestID(), Action: call.Action, Version: call.Version, Service: call.Service, Region: call.Region}
	if auth.err != nil {
		s.writeError(w, meta, http.StatusUnauthorized, "SignatureDoesNotMatch", auth.err.Error())
		return
	}
	wantVersion, known := actions[call.Service][call.Action]
	switch {
	case call.Action == "":
		s.writeError(w, meta, http.StatusBadRequest, "MissingParameter.Action", "The required parameter Action is not supplied.")
		return
	case !known:
		s.writeError(w, meta, http.StatusNotFound, "InvalidActionOrVersion", fmt.Sprintf("Could not find operation %s for version %s", call.Action, call.Version))
		return
	case call.Version != wantVersion:
		s.writeError(w, meta, http.StatusNotFound, "InvalidActionOrVersion", fmt.Sprintf("Could not find operation %s for version %s", call.Action, call.Version))
		return
	}
	if f, ok := s.nextFault(call.Action); ok {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if f.Echo {
			echo := secrettest.Echo(r, body)
			if f.Body != "" {
				f.Body += "\n" + echo
			} else {
				f.Message += ": " + echo
			}
		}
		switch {
		case f.Body != "":
			status := f.Status
			if status == 0 {
				status = http.StatusBadGateway
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			io.WriteString(w, f.Body)
		case f.Code != "":
			status := f.Status
			if status == 0 {
				status = http.StatusBadRequest
			}
			s.writeError(w, meta, status, f.Code, f.Message)
		default:
			// A pure delay: fall through to the model.
			s.answer(w, meta, call)
		}
		return
	}
	s.answer(w, meta, call)
}

// actions lists what the fake implements, per signing service, with the API
// version each requires.
var actions = map[string]map[string]string{
	serviceAutoScaling: {
		"DescribeScalingGroups":     AutoScalingVersion,
		"ModifyScalingGroup":        AutoScalingVersion,
		"DescribeScalingActivities": AutoScalingVersion,
		"DescribeScalingPolicies":   AutoScalingVersion,
		"CreateScalingPolicy":       AutoScalingVersion,
		"EnableScalingPolicy":       AutoScalingVersion,
		"DeleteScalingPolicy":       AutoScalingVersion,
		"DescribeScalingInstances":  AutoScalingVersion,
		"RemoveInstances":           AutoScalingVersion,
	},
	serviceECS: {
		"StopInstances":     ECSVersion,
		"StartInstances":    ECSVersion,
		"DescribeInstances": ECSVersion,
	},
}

func (s *Server) nextFault(action string) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, key := range []string{action, "*"} {
		if q := s.faults[key]; len(q) > 0 {
			s.faults[key] = q[1:]
			return q[0], true
		}
	}
	return Reply{}, false
}

func (s *Server) newID(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s-fake%06d", prefix, s.nextID)
}

func (s *Server) requestID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("20261130FAKE%08d", s.nextID)
}

// metadata is ResponseMetadata on the wire.
type metadata struct {
	RequestId string
	Action    string
	Version   string
	Service   string
	Region    string
	Error     *apiError `json:",omitempty"`
}

type apiError struct {
	Code    string
	Message string
}

// apiFailure is a model-level error: an HTTP status with a code.
type apiFailure struct {
	status        int
	code, message string
}

func (e *apiFailure) Error() string { return e.code + ": " + e.message }

func badParam(format string, args ...any) *apiFailure {
	return &apiFailure{http.StatusBadRequest, "InvalidParameter", fmt.Sprintf(format, args...)}
}

func missing(name string) *apiFailure {
	return &apiFailure{http.StatusBadRequest, "MissingParameter." + name, "The required parameter " + name + " is not supplied."}
}

func notFound(kind, id string) *apiFailure {
	return &apiFailure{http.StatusNotFound, "Invalid" + kind + ".NotFound", fmt.Sprintf("The specified %s %s does not exist.", kind, id)}
}

func (s *Server) writeError(w http.ResponseWriter, meta metadata, status int, code, message string) {
	meta.Error = &apiError{Code: code, Message: message}
	writeJSON(w, status, map[string]any{"ResponseMetadata": meta})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// answer runs the model, honouring ClientToken idempotency: a repeated
// token with the same parameters returns the first answer without acting
// again; with different parameters it is an error.
func (s *Server) answer(w http.ResponseWriter, meta metadata, call Call) {
	token := call.Params.Get("ClientToken")
	key := call.Action + "\x00" + token
	canon := canonicalParams(call.Params)
	if token != "" {
		s.mu.Lock()
		prev, seen := s.tokens[key]
		s.mu.Unlock()
		if seen {
			if prev.params != canon {
				s.writeError(w, meta, http.StatusBadRequest, "IdempotentParameterMismatch",
					"The request uses the same client token as a previous, but non-identical request.")
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(prev.body)
			return
		}
	}
	s.mu.Lock()
	result, err := s.model(call)
	s.mu.Unlock()
	if err != nil {
		s.writeError(w, meta, err.status, err.code, err.message)
		return
	}
	body, _ := json.Marshal(map[string]any{"ResponseMetadata": meta, "Result": result})
	if token != "" {
		s.mu.Lock()
		s.tokens[key] = tokenUse{params: canon, body: body}
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(body)
}

func canonicalParams(p url.Values) string {
	q := url.Values{}
	for k, v := range p {
		if k != "ClientToken" {
			q[k] = v
		}
	}
	return q.Encode()
}

// model dispatches to the action's handler, after the reclaims that have
// come (reap). Called with s.mu held.
func (s *Server) model(c Call) (any, *apiFailure) {
	s.reap()
	switch c.Action {
	case "DescribeScalingGroups":
		return s.describeScalingGroups(c.Params)
	case "ModifyScalingGroup":
		return s.modifyScalingGroup(c.Params)
	case "DescribeScalingActivities":
		return s.describeScalingActivities(c.Params)
	case "DescribeScalingPolicies":
		return s.describeScalingPolicies(c.Params)
	case "CreateScalingPolicy":
		return s.createScalingPolicy(c.Params)
	case "EnableScalingPolicy":
		return s.enableScalingPolicy(c.Params)
	case "DeleteScalingPolicy":
		return s.deleteScalingPolicy(c.Params)
	case "DescribeScalingInstances":
		return s.describeScalingInstances(c.Params)
	case "RemoveInstances":
		return s.removeInstances(c.Params)
	case "StopInstances":
		return s.stopInstances(c.Params)
	case "StartInstances":
		return s.startInstances(c.Params)
	case "DescribeInstances":
		return s.describeInstances(c.Params)
	}
	return nil, &apiFailure{http.StatusNotFound, "InvalidActionOrVersion", c.Action}
}

// list reads Name.1, Name.2, ... in order.
func list(p url.Values, name string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := p[name+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

func intParam(p url.Values, name string) (int, bool, *apiFailure) {
	v := p.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, badParam("%s: %q is not an integer", name, v)
	}
	return n, true, nil
}

// page slices n items by PageNumber/PageSize.
func (s *Server) page(p url.Values, n int) (from, to, number, size int, err *apiFailure) {
	number, ok, err := intParam(p, "PageNumber")
	if err != nil {
		return
	}
	if !ok || number < 1 {
		number = 1
	}
	size, ok, err = intParam(p, "PageSize")
	if err != nil {
		return
	}
	if !ok || size < 1 {
		size = 10
	}
	if size > s.PageSizeLimit {
		size = s.PageSizeLimit
	}
	from = min((number-1)*size, n)
	to = min(from+size, n)
	return from, to, number, size, nil
}

func (s *Server) describeScalingGroups(p url.Values) (any, *apiFailure) {
	ids := list(p, "ScalingGroupIds")
	var groups []*Group
	for _, id := range ids {
		if g, ok := s.groups[id]; ok {
			groups = append(groups, g)
		}
	}
	if len(ids) == 0 {
		for _, g := range s.groups {
			groups = append(groups, g)
		}
		sort.Slice(groups, func(i, j int) bool { return groups[i].ID < groups[j].ID })
	}
	from, to, number, size, err := s.page(p, len(groups))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, g := range groups[from:to] {
		out = append(out, map[string]any{
			"ScalingGroupId":       g.ID,
			"ScalingGroupName":     g.Name,
			"MinInstanceNumber":    g.Min,
			"MaxInstanceNumber":    g.Max,
			"DesireInstanceNumber": g.Desired,
			"TotalInstanceCount":   len(g.InstanceIDs),
			"StoppedInstanceCount": s.stoppedIn(g),
			"LifecycleState":       g.LifecycleState,
		})
		if g.ScalingMode != "" {
			out[len(out)-1]["ScalingMode"] = g.ScalingMode
		}
		if d := g.Distribution; d != nil {
			out[len(out)-1]["InstancesDistribution"] = map[string]any{
				"OnDemandBaseCapacity": d.OnDemandBaseCapacity, "OnDemandPercentageAboveBaseCapacity": d.OnDemandPercentageAboveBaseCapacity,
				"SpotInstanceRemedy": d.SpotInstanceRemedy, "CompensateWithOnDemand": d.CompensateWithOnDemand,
			}
		}
	}
	return map[string]any{"ScalingGroups": out, "TotalCount": len(groups), "PageNumber": number, "PageSize": size}, nil
}

// stoppedIn counts the group's members that are stopped. Called with s.mu held.
func (s *Server) stoppedIn(g *Group) int {
	n := 0
	for _, id := range g.InstanceIDs {
		if in, ok := s.instances[id]; ok && in.Status == "STOPPED" {
			n++
		}
	}
	return n
}

func (s *Server) group(p url.Values) (*Group, *apiFailure) {
	id := p.Get("ScalingGroupId")
	if id == "" {
		return nil, missing("ScalingGroupId")
	}
	g, ok := s.groups[id]
	if !ok {
		return nil, notFound("ScalingGroup", id)
	}
	return g, nil
}

func (s *Server) modifyScalingGroup(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	if err := modifyDistribution(g, p); err != nil {
		return nil, err
	}
	d, ok, err := intParam(p, "DesireInstanceNumber")
	if err != nil {
		return nil, err
	}
	if ok {
		if d < g.Min || d > g.Max {
			return nil, &apiFailure{http.StatusBadRequest, "InvalidDesireInstanceNumber.Malformed",
				fmt.Sprintf("DesireInstanceNumber %d is outside [MinInstanceNumber %d, MaxInstanceNumber %d].", d, g.Min, g.Max)}
		}
		if d != g.Desired {
			s.activities = append(s.activities, Activity{
				ID: s.newID("sga"), GroupID: g.ID, Type: "ShrinkOrExpand", Status: "Success",
				From: g.Desired, To: d, CreatedAt: s.Now().UTC(),
			})
			g.Desired = d
			g.DesiredWasModified++
			s.settle(g)
		}
	}
	return map[string]any{"ScalingGroupId": g.ID}, nil
}

// modifyDistribution applies ModifyScalingGroup's InstancesDistribution.*
// parameters to g, as the API checks them: the base within [0, 2000], the
// percentage within [0, 100], the flags true or false.
func modifyDistribution(g *Group, p url.Values) *apiFailure {
	const prefix = "InstancesDistribution."
	given := false
	for k := range p {
		given = given || strings.HasPrefix(k, prefix)
	}
	if !given {
		return nil
	}
	d := Distribution{}
	if g.Distribution != nil {
		d = *g.Distribution
	}
	for name, bound := range map[string]struct {
		to     *int
		lo, hi int
	}{"OnDemandBaseCapacity": {&d.OnDemandBaseCapacity, 0, 2000}, "OnDemandPercentageAboveBaseCapacity": {&d.OnDemandPercentageAboveBaseCapacity, 0, 100}} {
		n, ok, err := intParam(p, prefix+name)
		if err != nil {
			return err
		}
		if ok && (n < bound.lo || n > bound.hi) {
			return badParam("%s%s: %d is outside [%d, %d]", prefix, name, n, bound.lo, bound.hi)
		}
		if ok {
			*bound.to = n
		}
	}
	for name, to := range map[string]*bool{"SpotInstanceRemedy": &d.SpotInstanceRemedy, "CompensateWithOnDemand": &d.CompensateWithOnDemand} {
		switch v := p.Get(prefix + name); v {
		case "":
		case "true", "false":
			*to = v == "true"
		default:
			return badParam("%s%s: %q is not a boolean", prefix, name, v)
		}
	}
	g.Distribution = &d
	return nil
}

func (s *Server) describeScalingActivities(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	var acts []Activity
	for i := len(s.activities) - 1; i >= 0; i-- { // newest first
		if a := s.activities[i]; a.GroupID == g.ID {
			acts = append(acts, a)
		}
	}
	from, to, number, size, err := s.page(p, len(acts))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, a := range acts[from:to] {
		out = append(out, map[string]any{
			"ScalingActivityId":          a.ID,
			"ScalingGroupId":             a.GroupID,
			"ActivityType":               a.Type,
			"StatusCode":                 a.Status,
			"CurrentInstanceNumber":      a.From,
			"ExpectedRunTime":            a.CreatedAt.Format("2006-01-02T15:04:05Z"),
			"CreatedAt":                  a.CreatedAt.Format("2006-01-02T15:04:05Z"),
			"StoppedAt":                  a.CreatedAt.Format("2006-01-02T15:04:05Z"),
			"ActualAdjustInstanceNumber": a.To - a.From,
			"ResultMsg":                  fmt.Sprintf("desired %d -> %d", a.From, a.To),
		})
	}
	return map[string]any{"ScalingActivities": out, "TotalCount": len(acts), "PageNumber": number, "PageSize": size}, nil
}

func (s *Server) describeScalingPolicies(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	var ps []*Policy
	typ := p.Get("ScalingPolicyType")
	for _, pol := range s.policies {
		if pol.GroupID == g.ID && (typ == "" || pol.Type == typ) {
			ps = append(ps, pol)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	from, to, number, size, err := s.page(p, len(ps))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, pol := range ps[from:to] {
		m := map[string]any{
			"ScalingPolicyId":   pol.ID,
			"ScalingGroupId":    pol.GroupID,
			"ScalingPolicyName": pol.Name,
			"ScalingPolicyType": pol.Type,
			"AdjustmentType":    pol.AdjustmentType,
			"AdjustmentValue":   pol.AdjustmentValue,
			"Status":            pol.Status,
		}
		if pol.LaunchTime != "" {
			m["ScheduledPolicy"] = map[string]any{"LaunchTime": pol.LaunchTime}
		}
		out = append(out, m)
	}
	return map[string]any{"ScalingPolicies": out, "TotalCount": len(ps), "PageNumber": number, "PageSize": size}, nil
}

func (s *Server) createScalingPolicy(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"ScalingPolicyName", "ScalingPolicyType", "AdjustmentType", "AdjustmentValue"} {
		if p.Get(name) == "" {
			return nil, missing(name)
		}
	}
	pol := Policy{
		GroupID:        g.ID,
		Name:           p.Get("ScalingPolicyName"),
		Type:           p.Get("ScalingPolicyType"),
		AdjustmentType: p.Get("AdjustmentType"),
		LaunchTime:     p.Get("ScheduledPolicy.LaunchTime"),
		Status:         "InActive",
	}
	v, _, err := intParam(p, "AdjustmentValue")
	if err != nil {
		return nil, err
	}
	pol.AdjustmentValue = v
	switch pol.Type {
	case "Scheduled":
		if pol.LaunchTime == "" {
			return nil, missing("ScheduledPolicy.LaunchTime")
		}
		at, perr := time.Parse("2006-01-02T15:04Z", pol.LaunchTime)
		if perr != nil {
			return nil, &apiFailure{http.StatusBadRequest, "InvalidLaunchTime.Malformed", fmt.Sprintf("LaunchTime %q is not yyyy-MM-ddTHH:mmZ", pol.LaunchTime)}
		}
		if !at.After(s.Now()) {
			return nil, &apiFailure{http.StatusBadRequest, "InvalidLaunchTime.Malformed", "LaunchTime must be in the future"}
		}
	case "Recurrence", "Alarm":
	default:
		return nil, badParam("ScalingPolicyType %q", pol.Type)
	}
	switch pol.AdjustmentType {
	case "QuantityChangeInCapacity", "PercentChangeInCapacity":
	case "TotalCapacity":
		if v < g.Min || v > g.Max {
			return nil, badParam("AdjustmentValue %d is outside [%d, %d]", v, g.Min, g.Max)
		}
	default:
		return nil, badParam("AdjustmentType %q", pol.AdjustmentType)
	}
	for _, other := range s.policies {
		if other.GroupID == g.ID && other.Name == pol.Name {
			return nil, &apiFailure{http.StatusBadRequest, "InvalidScalingPolicyName.Duplicate", "A policy named " + pol.Name + " exists in this group."}
		}
	}
	pol.ID = s.newID("sp")
	s.policies[pol.ID] = &pol
	return map[string]any{"ScalingPolicyId": pol.ID}, nil
}

func (s *Server) policy(p url.Values) (*Policy, *apiFailure) {
	id := p.Get("ScalingPolicyId")
	if id == "" {
		return nil, missing("ScalingPolicyId")
	}
	pol, ok := s.policies[id]
	if !ok {
		return nil, notFound("ScalingPolicy", id)
	}
	return pol, nil
}

func (s *Server) enableScalingPolicy(p url.Values) (any, *apiFailure) {
	pol, err := s.policy(p)
	if err != nil {
		return nil, err
	}
	pol.Status = "Active"
	return map[string]any{"ScalingPolicyId": pol.ID}, nil
}

func (s *Server) deleteScalingPolicy(p url.Values) (any, *apiFailure) {
	pol, err := s.policy(p)
	if err != nil {
		return nil, err
	}
	delete(s.policies, pol.ID)
	return map[string]any{"ScalingPolicyId": pol.ID}, nil
}

func (s *Server) describeScalingInstances(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	want, status := list(p, "InstanceIds"), p.Get("Status")
	var ids []string
	for _, id := range g.InstanceIDs {
		if (len(want) == 0 || contains(want, id)) && (status == "" || s.lifecycle(id) == status) {
			ids = append(ids, id)
		}
	}
	from, to, number, size, err := s.page(p, len(ids))
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, id := range ids[from:to] {
		m := map[string]any{"InstanceId": id, "ScalingGroupId": g.ID, "Status": s.lifecycle(id), "CreationType": "AutoCreated"}
		if in := s.instances[id]; in != nil && !in.CreatedAt.IsZero() {
			m["CreatedTime"] = in.CreatedAt.UTC().Format(time.RFC3339)
		}
		out = append(out, m)
	}
	return map[string]any{"ScalingInstances": out, "TotalCount": len(ids), "PageNumber": number, "PageSize": size}, nil
}

// lifecycle is a member's Status in DescribeScalingInstances: Pending
// while it boots, InService from its ReadyAt on, Stopped while its ECS
// instance is (the model's reading of a recycled member).
func (s *Server) lifecycle(id string) string {
	in := s.instances[id]
	switch {
	case in == nil:
		return "InService"
	case in.Status == "STOPPED":
		return "Stopped"
	case s.bootNow().Before(in.ReadyAt):
		return "Pending"
	}
	return "InService"
}

// bootNow is the boots' clock (BootClock, else Now).
func (s *Server) bootNow() time.Time {
	if s.BootClock != nil {
		return s.BootClock()
	}
	return s.Now()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type operationDetail struct {
	InstanceId string
	Error      *apiError `json:",omitempty"`
}

// removeInstances models RemoveInstances as the API documents its two
// modes: RemoveMode=recycle in a group of ScalingMode recycle stops each
// member in economical mode and keeps it in the group, to be started
// first at the next scale-out; any other pairing (release, or a group in
// ScalingMode release) releases it. DecreaseDesiredCapacity=true lowers
// Desired by one a running member, so the group launches no replacement
// (a stopped member is outside the desired size already).
func (s *Server) removeInstances(p url.Values) (any, *apiFailure) {
	g, err := s.group(p)
	if err != nil {
		return nil, err
	}
	ids := list(p, "InstanceIds")
	if len(ids) == 0 {
		return nil, missing("InstanceIds")
	}
	mode := p.Get("RemoveMode")
	if mode != "" && mode != "recycle" && mode != "release" {
		return nil, badParam("RemoveMode: %q is not release or recycle", mode)
	}
	for _, id := range ids {
		if !contains(g.InstanceIDs, id) {
			return nil, &apiFailure{http.StatusBadRequest, "InvalidInstance.NotInScalingGroup",
				fmt.Sprintf("The instance %s is not in scaling group %s.", id, g.ID)}
		}
	}
	for _, id := range ids {
		running := s.lifecycle(id) != "Stopped"
		if mode == "recycle" && g.ScalingMode == ScalingModeRecycle {
			s.stop(id)
		} else {
			s.release(g, id)
		}
		if running && p.Get("DecreaseDesiredCapacity") == "true" && g.Desired > g.Min {
			g.Desired--
		}
	}
	s.settle(g)
	act := Activity{ID: s.newID("sga"), GroupID: g.ID, Type: "ShrinkOrExpand", Status: "Success", CreatedAt: s.Now().UTC()}
	s.activities = append(s.activities, act)
	return map[string]any{"ScalingActivityId": act.ID}, nil
}

func (s *Server) stopInstances(p url.Values) (any, *apiFailure) {
	ids := list(p, "InstanceIds")
	if len(ids) == 0 {
		return nil, missing("InstanceIds")
	}
	mode := p.Get("StoppedMode")
	switch mode {
	case "", "KeepCharging", "StopCharging":
	default:
		return nil, &apiFailure{http.StatusBadRequest, "InvalidStoppedMode.Malformed", "The specified StoppedMode is malformed."}
	}
	var details []operationDetail
	for _, id := range ids {
		in, ok := s.instances[id]
		switch {
		case !ok:
			details = append(details, operationDetail{id, &apiError{"InvalidInstance.NotFound", "The specified instance does not exist."}})
		case mode == "StopCharging" && in.RefusesStopCharging:
			details = append(details, operationDetail{id, &apiError{s.StopChargingRefusal.Code, s.StopChargingRefusal.Message}})
		default:
			in.Status, in.ReadyAt = "STOPPED", s.bootNow().Add(s.StopDelay)
			in.StoppedMode = mode
			if mode == "" {
				in.StoppedMode = "KeepCharging"
			}
			details = append(details, operationDetail{InstanceId: id})
		}
	}
	return map[string]any{"OperationDetails": details}, nil
}

func (s *Server) startInstances(p url.Values) (any, *apiFailure) {
	ids := list(p, "InstanceIds")
	if len(ids) == 0 {
		return nil, missing("InstanceIds")
	}
	var details []operationDetail
	for _, id := range ids {
		in, ok := s.instances[id]
		if !ok {
			details = append(details, operationDetail{id, &apiError{"InvalidInstance.NotFound", "The specified instance does not exist."}})
			continue
		}
		if s.ecsStatus(in) == "STOPPING" {
			details = append(details, operationDetail{id, &apiError{"IncorrectInstanceStatus", "The instance is stopping; start it once it has stopped."}})
			continue
		}
		if in.Status == "STOPPED" {
			in.ReadyAt = s.bootNow().Add(s.StartDelay)
		}
		in.Status = "RUNNING"
		in.StoppedMode = ""
		details = append(details, operationDetail{InstanceId: id})
	}
	return map[string]any{"OperationDetails": details}, nil
}

// ecsStatus is an instance's Status in DescribeInstances: STARTING (or
// booting after a launch) until ReadyAt, then RUNNING; STOPPING until
// ReadyAt, then STOPPED. Called with s.mu held.
func (s *Server) ecsStatus(in *Instance) string {
	settling := s.bootNow().Before(in.ReadyAt)
	switch {
	case in.Status == "STOPPED" && settling:
		return "STOPPING"
	case in.Status == "STOPPED":
		return "STOPPED"
	case settling:
		return "STARTING"
	}
	return "RUNNING"
}

// describeInstances models ECS DescribeInstances: the instances InstanceIds
// names (all, by ID, when none), unknown IDs left out as the API does,
// MaxResults a page (capped by PageSizeLimit, so callers must page) and
// NextToken the opaque offset of the next page. Each instance's
// SpotStrategy says whether it runs on spot (SpotStrategyAsPriceGo, what
// a group's spot launch gets) or on demand (SpotStrategyNone), the field
// the real API reports; its InstanceChargeType is PostPaid either way.
func (s *Server) describeInstances(p url.Values) (any, *apiFailure) {
	ids := list(p, "InstanceIds")
	if len(ids) == 0 {
		for id := range s.instances {
			ids = append(ids, id)
		}
		sort.Strings(ids)
	}
	var found []*Instance
	for _, id := range ids {
		if in, ok := s.instances[id]; ok {
			found = append(found, in)
		}
	}
	size, ok, err := intParam(p, "MaxResults")
	if err != nil {
		return nil, err
	}
	if !ok || size < 1 {
		size = 10
	}
	size = min(size, s.PageSizeLimit)
	from := 0
	if t := p.Get("NextToken"); t != "" {
		n, convErr := strconv.Atoi(t)
		if convErr != nil || n < 0 || n > len(found) {
			return nil, badParam("NextToken: %q is not a token this API returned", t)
		}
		from = n
	}
	to := min(from+size, len(found))
	out := []map[string]any{}
	for _, in := range found[from:to] {
		m := map[string]any{"InstanceId": in.ID, "Status": s.ecsStatus(in), "InstanceChargeType": "PostPaid", "SpotStrategy": SpotStrategyNone}
		if in.Spot {
			m["SpotStrategy"] = SpotStrategyAsPriceGo
		}
		if in.Status == "STOPPED" {
			m["StoppedMode"] = in.StoppedMode
		}
		out = append(out, m)
	}
	next := ""
	if to < len(found) {
		next = strconv.Itoa(to)
	}
	return map[string]any{"Instances": out, "NextToken": next, "TotalCount": len(found)}, nil
}

// FailAll is a convenience for tests: n copies of r.
func FailAll(n int, r Reply) []Reply {
	out := make([]Reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// Throttled is the reply of a throttled request.
var Throttled = Reply{Status: http.StatusTooManyRequests, Code: "AccountFlowLimitExceeded", Message: "Request was denied due to account flow control."}

// Internal is the reply of a 5xx failure.
var Internal = Reply{Status: http.StatusInternalServerError, Code: "InternalError", Message: "The request processing has failed due to some unknown error."}
