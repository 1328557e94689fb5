package deploy_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/prewarm/prewarm/election"
	"github.com/prewarm/prewarm/election/kubetest"
	"github.com/prewarm/prewarm/poolspec"
)

// apiCall is one Kubernetes API permission: the API group, the resource
// and the verb, as a Role's rule names them.
type apiCall struct{ group, resource, verb string }

// recorder is an http.RoundTripper noting the API call of every request
// in one namespace, as the API server's authorizer sees it.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[apiCall]bool
	ns   map[string]bool // the namespaces asked for
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	// /api/v1/namespaces/NS/RES[/NAME] or /apis/GROUP/VERSION/namespaces/NS/RES[/NAME]
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	group := ""
	if len(parts) > 0 && parts[0] == "apis" && len(parts) > 1 {
		group, parts = parts[1], parts[1:]
	}
	if len(parts) >= 5 && parts[2] == "namespaces" {
		item := len(parts) >= 6
		verb := map[string]string{http.MethodGet: "list", http.MethodPost: "create"}[req.Method]
		if item {
			verb = map[string]string{http.MethodGet: "get", http.MethodPut: "update", http.MethodDelete: "delete", http.MethodPatch: "patch"}[req.Method]
		}
		r.mu.Lock()
		r.seen[apiCall{group, parts[4], verb}], r.ns[parts[3]] = true, true
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

// electionCalls runs package election as serve does, a Sharder and the
// shard state Store, against the Kubernetes stand-in until it holds its
// buckets, has renewed them and has written and rewritten one bucket's
// state, and returns the API calls it made and the namespaces it asked
// for. It adds the one call a short run does not make: deleting a member
// Lease left unchanged for 10 lease durations.
func electionCalls(t *testing.T, cfg poolspec.Election, namespace string) (map[apiCall]bool, map[string]bool) {
	t.Helper()
	kube := kubetest.NewServer()
	t.Cleanup(kube.Close)
	rec := &recorder{seen: map[apiCall]bool{}, ns: map[string]bool{}}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: kube.URL, QPS: -1,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec }})
	if err != nil {
		t.Fatal(err)
	}
	// The file's bucket count and prefix; the shortest periods, to be quick.
	timings := election.Timings{LeaseDuration: time.Second, RenewDeadline: 600 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
	sharder, err := election.NewSharder(cs.CoordinationV1(), election.ShardConfig{Namespace: namespace, Identity: "prewarm-forecaster-0",
		Prefix: cfg.ShardPrefix, Buckets: cfg.Buckets, Timings: timings})
	if err != nil {
		t.Fatalf("the example's election block, as package election reads it: %v", err)
	}
	store, err := election.NewStore(cs.CoreV1(), namespace, cfg.ShardPrefix)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = sharder.Run(ctx)
	}()
	for len(sharder.Owned()) < cfg.Buckets && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(3 * timings.RetryPeriod) // renewals
	for range 2 {                       // create, then update
		_, version, err := store.Get(ctx, 0)
		if err == nil {
			err = store.Put(ctx, 0, []byte(`{"pools":{}}`), version)
		}
		if err != nil {
			t.Fatalf("shard state: %v", err)
		}
	}
	cancel()
	<-done
	if got := len(sharder.Owned()); ctx.Err() == nil && got != 0 {
		t.Errorf("after the run, %d buckets still held", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.seen[apiCall{"coordination.k8s.io", "leases", "delete"}] = true
	return rec.seen, rec.ns
}

// granted reports whether some Role bound to the service account in
// namespace ns allows call.
func granted(m manifests, ns, sa, saNamespace string, call apiCall) bool {
	for _, b := range m.bindings {
		if b.Namespace != ns || b.RoleRef.Kind != "Role" || !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == saNamespace
		}) {
			continue
		}
		for _, r := range m.roles[key(ns, b.RoleRef.Name)].Rules {
			if slices.Contains(r.APIGroups, call.group) && slices.Contains(r.Resources, call.resource) &&
				slices.Contains(r.Verbs, call.verb) && len(r.ResourceNames) == 0 {
				return true
			}
		}
	}
	return false
}

// envFrom returns the field path an environment variable of c is read
// from through the downward API ("" when it is not).
func envFrom(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
	}
	return ""
}

// checkReplicas checks the forecaster's replicas against its
// configuration: several only with election on (else each would apply
// every pool), each naming itself by its pod name, in a namespace where
// its service account may make every call package election makes, with a
// PodDisruptionBudget keeping one running; one alone, without election,
// replaced with Recreate so that two never run at once.
func checkReplicas(t *testing.T, m manifests, dep appsv1.Deployment, c corev1.Container, cfg *poolspec.File) {
	replicas := int32(1)
	if dep.Spec.Replicas != nil {
		replicas = *dep.Spec.Replicas
	}
	el := cfg.Election
	if !el.Enabled {
		if replicas != 1 || dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("election off: want exactly one replica, replaced with Recreate (two forecasters would both apply capacity)")
		}
		return
	}
	if replicas < 2 {
		t.Errorf("election.enabled with %d replica: the example runs two", replicas)
	}
	if el.APIServer != "" {
		t.Errorf("election.api_server %q: in a cluster the election uses the pod's service account", el.APIServer)
	}
	if el.Identity != "" {
		t.Errorf("election.identity %q: every replica would claim the same identity; leave it unset for $POD_NAME", el.Identity)
	}
	if got := envFrom(c, "POD_NAME"); got != "metadata.name" {
		t.Errorf("POD_NAME comes from %q, want the downward API's metadata.name: it is the replica's identity", got)
	}
	namespace := el.Namespace
	if namespace == "" {
		if got := envFrom(c, "POD_NAMESPACE"); got != "metadata.namespace" {
			t.Errorf("election.namespace unset and POD_NAMESPACE from %q, want the downward API's metadata.namespace", got)
		}
		namespace = dep.Namespace
	}
	if dl := el.LeaseDuration; c.ReadinessProbe != nil && time.Duration(c.ReadinessProbe.PeriodSeconds)*time.Second > 2*dl {
		t.Errorf("readiness probed every %ds, past 2 × election.lease_duration %v", c.ReadinessProbe.PeriodSeconds, dl)
	}

	calls, namespaces := electionCalls(t, el, namespace)
	if got := slices.Sorted(maps.Keys(namespaces)); !slices.Equal(got, []string{namespace}) {
		t.Errorf("the election asked for namespaces %v, want only %s", got, namespace)
	}
	sa := dep.Spec.Template.Spec.ServiceAccountName
	for _, want := range []apiCall{
		{"coordination.k8s.io", "leases", "get"}, {"coordination.k8s.io", "leases", "create"}, {"coordination.k8s.io", "leases", "update"},
		{"", "configmaps", "get"}, {"", "configmaps", "create"}, {"", "configmaps", "update"},
	} {
		if !calls[want] {
			t.Errorf("the election made no %s of %s: the check runs too little of it", want.verb, want.resource)
		}
	}
	for call := range calls {
		if !granted(m, namespace, sa, dep.Namespace, call) {
			t.Errorf("the election makes %s on %s (group %q) in namespace %s; no Role bound to %s/%s allows it",
				call.verb, call.resource, call.group, namespace, dep.Namespace, sa)
		}
	}

	var pdb bool
	for _, b := range m.budgets {
		if b.Namespace != dep.Namespace || b.Spec.Selector == nil || !selects(b.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) {
			continue
		}
		pdb = true
		if least := b.Spec.MinAvailable; least == nil || *least != intstr.FromInt32(1) || b.Spec.MaxUnavailable != nil {
			t.Errorf("PodDisruptionBudget %s: minAvailable %v, want 1 (of %d replicas)", b.Name, least, replicas)
		}
	}
	if !pdb {
		t.Errorf("no PodDisruptionBudget selects the forecaster's pods: a drain could stop both replicas at once")
	}
	if s := dep.Spec.Strategy; s.Type == appsv1.RollingUpdateDeploymentStrategyType && s.RollingUpdate != nil &&
		s.RollingUpdate.MaxUnavailable != nil && s.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update maxUnavailable %v: want 0, one replica at a time", s.RollingUpdate.MaxUnavailable)
	}
}
