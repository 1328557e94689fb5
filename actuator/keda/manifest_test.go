package keda_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pb "github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"gopkg.in/yaml.v3"

	"github.com/prewarm/prewarm/actuator/actuatortest"
)

// Field names of KEDA v2.21's ScaledObject, from the json tags in
// github.com/kedacore/keda/v2@v2.21.0/apis/keda/v1alpha1/scaledobject_types.go
// and scaletriggers_types.go (grep -o 'json:"[a-zA-Z]*').
var scaledObjectFields = map[string][]string{
	"spec": {"scaleTargetRef", "pollingInterval", "initialCooldownPeriod", "cooldownPeriod", "idleReplicaCount",
		"minReplicaCount", "maxReplicaCount", "advanced", "triggers", "fallback"},
	"fallback": {"failureThreshold", "replicas", "behavior"},
	"advanced": {"horizontalPodAutoscalerConfig", "restoreToOriginalReplicaCount", "scalingModifiers"},
	"trigger":  {"type", "name", "metadata", "authenticationRef", "metricType", "useCachedMetrics"},
}

func TestSampleScaledObject(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "keda-scaledobject.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var so, svc map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch doc["kind"] {
		case "ScaledObject":
			so = doc
		case "Service":
			svc = doc
		}
	}
	if so == nil || svc == nil {
		t.Fatal("sample lacks a ScaledObject or a Service")
	}
	if so["apiVersion"] != "keda.sh/v1alpha1" {
		t.Errorf("apiVersion = %v", so["apiVersion"])
	}
	spec := so["spec"].(map[string]any)
	checkKeys(t, "spec", spec)
	checkKeys(t, "fallback", spec["fallback"].(map[string]any))
	checkKeys(t, "advanced", spec["advanced"].(map[string]any))
	if b := spec["fallback"].(map[string]any)["behavior"]; b != "currentReplicas" {
		t.Errorf("fallback.behavior = %v, want currentReplicas (keep pods while prewarm has no plan)", b)
	}
	trig := spec["triggers"].([]any)[0].(map[string]any)
	checkKeys(t, "trigger", trig)
	if typ := trig["type"]; typ != "external" && typ != "external-push" {
		t.Errorf("trigger type = %v", typ)
	}
	if trig["metricType"] != "AverageValue" {
		t.Errorf("metricType = %v, want AverageValue (replicas = plan / target 1)", trig["metricType"])
	}
	md := map[string]string{}
	for k, v := range trig["metadata"].(map[string]any) {
		md[k] = v.(string)
	}
	port := svc["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"]
	if !strings.HasSuffix(md["scalerAddress"], ":"+itoa(port)) {
		t.Errorf("scalerAddress %q does not use the Service port %v", md["scalerAddress"], port)
	}

	// The trigger metadata, sent as KEDA sends it, reaches the plan.
	s := newScaler(actuatortest.NewClock(t0))
	c := serve(t, s)
	ctx := callCtx(t)
	if err := s.SetDesired(ctx, md["pool"], 7, "test"); err != nil {
		t.Fatal(err)
	}
	ref := &pb.ScaledObjectRef{Name: "sd-inference", Namespace: "inference", ScalerMetadata: md}
	spec2, err := c.GetMetricSpec(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref, MetricName: spec2.MetricSpecs[0].MetricName})
	if err != nil || m.MetricValues[0].MetricValueFloat != 7 {
		t.Errorf("GetMetrics with the sample's metadata = %v, %v; want 7", m, err)
	}
}

func checkKeys(t *testing.T, what string, m map[string]any) {
	t.Helper()
	for k := range m {
		if !slices.Contains(scaledObjectFields[what], k) {
			t.Errorf("%s: unknown ScaledObject field %q", what, k)
		}
	}
}

func itoa(v any) string {
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}
