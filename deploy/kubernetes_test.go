package deploy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	collectorconfig "github.com/prewarm/prewarm/collector/config"
	"github.com/prewarm/prewarm/poolspec"
	"github.com/prewarm/prewarm/store/prometheus"
)

// manifests holds every object of deploy/kubernetes, decoded into the
// Kubernetes API types with unknown fields refused (a misspelt field is an
// error, not silently dropped as kubectl apply --validate=false would).
type manifests struct {
	files       []string
	namespaces  map[string]corev1.Namespace      // by "/name"
	accounts    map[string]corev1.ServiceAccount // by namespace/name, as the rest
	configMaps  map[string]corev1.ConfigMap
	services    map[string]corev1.Service
	deployments map[string]appsv1.Deployment
	daemonSets  map[string]appsv1.DaemonSet
	roles       map[string]rbacv1.Role
	bindings    map[string]rbacv1.RoleBinding
	budgets     map[string]policyv1.PodDisruptionBudget
}

func key(ns, name string) string { return ns + "/" + name }

// add decodes one object with strict and files it under namespace/name
// (a Namespace under "/name").
func add[T any, P interface {
	*T
	GetNamespace() string
	GetName() string
}](strict func(any), into map[string]T) {
	var o T
	strict(P(&o))
	into[key(P(&o).GetNamespace(), P(&o).GetName())] = o
}

func loadManifests(t *testing.T) manifests {
	t.Helper()
	m := manifests{namespaces: map[string]corev1.Namespace{}, accounts: map[string]corev1.ServiceAccount{},
		configMaps: map[string]corev1.ConfigMap{}, services: map[string]corev1.Service{}, deployments: map[string]appsv1.Deployment{},
		daemonSets: map[string]appsv1.DaemonSet{}, roles: map[string]rbacv1.Role{}, bindings: map[string]rbacv1.RoleBinding{},
		budgets: map[string]policyv1.PodDisruptionBudget{}}
	paths, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, path := range paths {
		if filepath.Base(path) == "kustomization.yaml" {
			continue
		}
		m.files = append(m.files, filepath.Base(path))
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for i := 0; ; i++ {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: document %d: %v", path, i, err)
			}
			if doc == nil {
				continue
			}
			where := fmt.Sprintf("%s: document %d (%v)", path, i, doc["kind"])
			js, err := json.Marshal(doc)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			strict := func(into any) {
				d := json.NewDecoder(bytes.NewReader(js))
				d.DisallowUnknownFields()
				if err := d.Decode(into); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			switch doc["kind"] {
			case "Namespace":
				add(strict, m.namespaces)
			case "ServiceAccount":
				add(strict, m.accounts)
			case "ConfigMap":
				add(strict, m.configMaps)
			case "Service":
				add(strict, m.services)
			case "Deployment":
				add(strict, m.deployments)
			case "DaemonSet":
				add(strict, m.daemonSets)
			case "Role":
				add(strict, m.roles)
			case "RoleBinding":
				add(strict, m.bindings)
			case "PodDisruptionBudget":
				add(strict, m.budgets)
			default:
				t.Errorf("%s: unexpected kind", where)
			}
		}
	}
	return m
}

func TestKubernetesManifests(t *testing.T) {
	m := loadManifests(t)
	dep, ok := m.deployments[key("prewarm", "prewarm-forecaster")]
	if !ok {
		t.Fatal("no Deployment prewarm/prewarm-forecaster")
	}
	ds, ok := m.daemonSets[key("prewarm-gpu", "prewarm-collector")]
	if !ok {
		t.Fatal("no DaemonSet prewarm-gpu/prewarm-collector")
	}

	t.Run("forecaster deployment", func(t *testing.T) {
		if !selects(dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels) {
			t.Errorf("selector %v does not match the pod labels %v", dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels)
		}
		c := dep.Spec.Template.Spec.Containers[0]
		args := flagValues(c.Args)
		if c.Args[0] != "serve" {
			t.Errorf("args %v: want serve first", c.Args)
		}
		for _, f := range []string{"listen", "keda-listen"} {
			checkListen(t, "forecaster --"+f, args[f])
		}
		if _, err := prometheus.ParseSpec(args["store"], func(string) string { return "" }); err != nil && strings.HasPrefix(args["store"], prometheus.SpecPrefix) {
			t.Errorf("--store: %v", err)
		}
		for flag, port := range map[string]string{"listen": "http", "keda-listen": "keda-grpc"} {
			if p := containerPort(c, port); p == 0 || !strings.HasSuffix(args[flag], ":"+strconv.Itoa(int(p))) {
				t.Errorf("--%s %s does not listen on the container port %s (%d)", flag, args[flag], port, p)
			}
		}
		// The config it mounts is what `forecaster serve` accepts.
		cfgPath := args["config"]
		cm := mountedConfigMap(t, m, dep.Namespace, dep.Spec.Template.Spec, c, cfgPath)
		cfg, err := poolspec.Parse([]byte(cm), "ConfigMap prewarm-forecaster", nil)
		if err != nil {
			t.Fatalf("the forecaster's ConfigMap: %v", err)
		}
		t.Run("probes", func(t *testing.T) { checkProbes(t, m, dep, c) })
		t.Run("kubescale RBAC", func(t *testing.T) { checkScaleRBAC(t, m, dep, cfg) })
		t.Run("KEDA service", func(t *testing.T) { checkKEDAService(t, m, dep, c) })
		t.Run("replicas", func(t *testing.T) { checkReplicas(t, m, dep, c, cfg) })
		if !strings.Contains(cm, "audit_log: /var/lib/prewarm/") || !mounted(c, "/var/lib/prewarm") {
			t.Errorf("the audit log must go to the writable /var/lib/prewarm volume (the root file system is read-only)")
		}
	})

	t.Run("collector daemonset", func(t *testing.T) {
		spec := ds.Spec.Template.Spec
		var col, dcgm *corev1.Container
		for i := range spec.Containers {
			switch spec.Containers[i].Name {
			case "collector":
				col = &spec.Containers[i]
			case "dcgm-exporter":
				dcgm = &spec.Containers[i]
			}
		}
		if col == nil || dcgm == nil {
			t.Fatal("want a collector and a dcgm-exporter container in one pod")
		}
		args := flagValues(col.Args)
		raw := mountedConfigMap(t, m, ds.Namespace, spec, *col, args["config"])
		cfg, err := collectorconfig.Parse("ConfigMap prewarm-collector", []byte(raw))
		if err != nil {
			t.Fatalf("the collector's ConfigMap: %v", err)
		}
		checkListen(t, "collector listen", cfg.Listen)
		if p := containerPort(*col, "http"); p == 0 || !strings.HasSuffix(cfg.Listen, ":"+strconv.Itoa(int(p))) {
			t.Errorf("collector listens on %s, not on its container port http (%d)", cfg.Listen, p)
		}
		var listen string
		for _, e := range dcgm.Env {
			if e.Name == "DCGM_EXPORTER_LISTEN" {
				listen = e.Value
			}
		}
		if listen != "127.0.0.1:9400" || !strings.Contains(raw, "url: http://127.0.0.1:9400/metrics") {
			t.Errorf("dcgm-exporter listens on %q; the collector must read it on the pod's loopback 127.0.0.1:9400", listen)
		}
		if !selects(ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels) {
			t.Errorf("selector does not match the pod labels")
		}
	})

	t.Run("pod security", func(t *testing.T) {
		for name, ns := range map[string]string{"Deployment prewarm-forecaster": dep.Namespace, "DaemonSet prewarm-collector": ds.Namespace} {
			if _, ok := m.namespaces[key("", ns)]; !ok {
				t.Errorf("%s: namespace %s is not in namespace.yaml", name, ns)
			}
		}
		if lvl := m.namespaces[key("", dep.Namespace)].Labels["pod-security.kubernetes.io/enforce"]; lvl != "restricted" {
			t.Errorf("namespace %s enforces %q, want restricted", dep.Namespace, lvl)
		}
		checkRestricted(t, "forecaster", dep.Spec.Template.Spec, dep.Spec.Template.Spec.Containers)
		// The collector itself is restricted; only dcgm-exporter needs more.
		for _, c := range ds.Spec.Template.Spec.Containers {
			if c.Name == "collector" {
				checkRestricted(t, "collector", corev1.PodSpec{}, []corev1.Container{c})
			}
		}
	})

	t.Run("kustomization", func(t *testing.T) {
		var k struct {
			Resources []string `yaml:"resources"`
		}
		raw, err := os.ReadFile(filepath.Join("kubernetes", "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, &k); err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(slices.Values(k.Resources)), m.files; !slices.Equal(got, want) {
			t.Errorf("kustomization resources %v, want every manifest %v", got, want)
		}
		if kubectl, err := exec.LookPath("kubectl"); err == nil {
			out, err := exec.Command(kubectl, "kustomize", "kubernetes").CombinedOutput()
			if err != nil {
				t.Errorf("kubectl kustomize: %v\n%s", err, out)
			}
		}
	})
}

// flagValues maps --flag=value arguments to their values.
func flagValues(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(strings.TrimPrefix(a, "--"), "="); ok && strings.HasPrefix(a, "--") {
			out[k] = v
		}
	}
	return out
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

func mounted(c corev1.Container, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == path && !v.ReadOnly })
}

// mountedConfigMap returns the ConfigMap key that file is inside container
// c of a pod in namespace ns.
func mountedConfigMap(t *testing.T, m manifests, ns string, pod corev1.PodSpec, c corev1.Container, file string) string {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if filepath.Dir(file) != vm.MountPath {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil {
				cm, ok := m.configMaps[key(ns, v.ConfigMap.Name)]
				if !ok {
					t.Fatalf("ConfigMap %s/%s is mounted but not defined", ns, v.ConfigMap.Name)
				}
				data, ok := cm.Data[filepath.Base(file)]
				if !ok {
					t.Fatalf("ConfigMap %s has no key %s (keys %v)", cm.Name, filepath.Base(file), slices.Collect(maps.Keys(cm.Data)))
				}
				return data
			}
		}
	}
	t.Fatalf("%s is not inside a mounted ConfigMap", file)
	return ""
}

// checkScaleRBAC checks that the forecaster's service account may get and
// patch the scale subresource of exactly the workloads its kubescale pools
// name (the API calls of actuator/kubescale), and nothing more.
func checkScaleRBAC(t *testing.T, m manifests, dep appsv1.Deployment, cfg *poolspec.File) {
	sa := dep.Spec.Template.Spec.ServiceAccountName
	if _, ok := m.accounts[key(dep.Namespace, sa)]; !ok {
		t.Fatalf("service account %s/%s is not defined", dep.Namespace, sa)
	}
	if a := dep.Spec.Template.Spec.AutomountServiceAccountToken; a != nil && !*a {
		t.Errorf("the kubescale back-end reads the mounted service account token: automount must be on")
	}
	for _, p := range cfg.Pools {
		if p.Backend != "kubescale" {
			continue
		}
		ns, workload, resource := p.Options["namespace"], p.Options["workload"], p.Options["resource"]
		if workload == "" {
			workload = p.Name
		}
		if resource == "" {
			resource = "deployments"
		}
		granted := map[string]bool{}
		for _, b := range m.bindings {
			if b.Namespace != ns || !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == dep.Namespace
			}) {
				continue
			}
			role, ok := m.roles[key(ns, b.RoleRef.Name)]
			if b.RoleRef.Kind != "Role" || !ok {
				t.Errorf("RoleBinding %s refers to %s %s, not a Role defined here", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
				continue
			}
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					// The scale subresource is read and patched; the
					// workload itself is only read, for its ready pods.
					scale := strings.HasSuffix(res, "/scale")
					want := []string{"get"}
					if scale {
						want = []string{"get", "patch"}
					}
					if !slices.Equal(slices.Sorted(slices.Values(r.Verbs)), want) {
						t.Errorf("Role %s grants %v on %s; kubescale needs %v, nothing more", role.Name, r.Verbs, res, want)
					}
					if !slices.Equal(r.APIGroups, []string{"apps"}) || !(scale || res == "deployments" || res == "statefulsets") {
						t.Errorf("Role %s grants %v on %s; kubescale needs only apps deployments, statefulsets and their scale", role.Name, r.APIGroups, res)
					}
					if len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, workload) {
						granted[res] = true
					}
				}
			}
		}
		if !granted[resource+"/scale"] {
			t.Errorf("pool %s: nothing lets %s/%s get and patch %s/%s/scale in namespace %q", p.Name, dep.Namespace, sa, resource, workload, ns)
		}
		if !granted[resource] {
			t.Errorf("pool %s: nothing lets %s/%s get %s/%s in namespace %q (its ready pods)", p.Name, dep.Namespace, sa, resource, workload, ns)
		}
	}
}

// checkProbes checks that liveness asks /healthz (the process is alive)
// and readiness /readyz (decisions succeed) on the HTTP port, so a store
// outage makes the pod unready, never restarted; and that the Service
// still routes to an unready pod, for KEDA to reach the scaler then.
func checkProbes(t *testing.T, m manifests, dep appsv1.Deployment, c corev1.Container) {
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET of %s", p.name, p.path)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || g.Port.String() != "http" || containerPort(c, "http") == 0 {
			t.Errorf("%s probe: GET %s on port %s, want %s on the container port http", p.name, g.Path, g.Port.String(), p.path)
		}
	}
	if l := c.LivenessProbe; l != nil && time.Duration(l.PeriodSeconds*l.FailureThreshold)*time.Second < 2*time.Minute {
		t.Errorf("liveness restarts after %ds of silence: give a busy process at least 2 minutes", l.PeriodSeconds*l.FailureThreshold)
	}
	for _, s := range m.services {
		if s.Namespace == dep.Namespace && selects(s.Spec.Selector, dep.Spec.Template.Labels) && !s.Spec.PublishNotReadyAddresses {
			t.Errorf("Service %s: want publishNotReadyAddresses, so KEDA reaches the scaler while decisions fail", s.Name)
		}
	}
}

// checkKEDAService checks that the Service reaches the KEDA scaler port and
// is the address docs/keda-scaledobject.yaml gives KEDA.
func checkKEDAService(t *testing.T, m manifests, dep appsv1.Deployment, c corev1.Container) {
	var svc *corev1.Service
	for _, s := range m.services {
		if s.Namespace == dep.Namespace && selects(s.Spec.Selector, dep.Spec.Template.Labels) {
			svc = &s
		}
	}
	if svc == nil {
		t.Fatal("no Service selects the forecaster's pods")
	}
	if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service type %s: keep it cluster-internal", svc.Spec.Type)
	}
	var port *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == "keda-grpc" {
			port = &svc.Spec.Ports[i]
		}
	}
	if port == nil || port.Port != 9110 || port.TargetPort.String() != "keda-grpc" || containerPort(c, "keda-grpc") == 0 {
		t.Fatalf("Service %s: want port keda-grpc 9110 targeting the container port keda-grpc", svc.Name)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "keda-scaledobject.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("scalerAddress: %s.%s.svc.cluster.local:%d", svc.Name, svc.Namespace, port.Port)
	if !strings.Contains(string(doc), addr) {
		t.Errorf("docs/keda-scaledobject.yaml does not point KEDA at this Service (%s)", addr)
	}
}

// checkRestricted checks the Pod Security Standard "restricted" on a pod
// and its containers (https://kubernetes.io/docs/concepts/security/pod-security-standards/).
func checkRestricted(t *testing.T, name string, pod corev1.PodSpec, containers []corev1.Container) {
	psc := pod.SecurityContext
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("%s: host namespaces", name)
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s: hostPath volume %s", name, v.Name)
		}
	}
	for _, c := range containers {
		sc := c.SecurityContext
		where := name + " container " + c.Name
		if sc == nil {
			t.Errorf("%s: no securityContext", where)
			continue
		}
		nonRoot := sc.RunAsNonRoot != nil && *sc.RunAsNonRoot || psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot
		seccomp := sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault ||
			psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
		switch {
		case !nonRoot:
			t.Errorf("%s: runAsNonRoot is not set", where)
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("%s: allowPrivilegeEscalation is not false", where)
		case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
			t.Errorf("%s: capabilities must drop ALL and add none", where)
		case !seccomp:
			t.Errorf("%s: seccompProfile RuntimeDefault is not set", where)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("%s: readOnlyRootFilesystem is not set (not required by restricted, but prewarm needs no writes there)", where)
		case sc.Privileged != nil && *sc.Privileged:
			t.Errorf("%s: privileged", where)
		}
		if c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: no memory limit", where)
		}
	}
}
