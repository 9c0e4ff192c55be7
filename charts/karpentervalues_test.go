package charts

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/pkg/operator"
)

// karpenterValues is an operator's values file for Karpenter v1.15's chart (testdata says more).
const karpenterValues = "testdata/karpenter-values.yaml"

// upstreamTopLevelValues are the top-level keys of aws/karpenter-provider-aws's
// charts/karpenter/values.yaml (main after v1.14.1, the v1.15 line): the fixture must carry every
// one, so that each is either honoured or refused below.
var upstreamTopLevelValues = []string{
	"additionalAnnotations", "additionalClusterRoleRules", "additionalLabels", "affinity", "controller", "dnsConfig",
	"dnsPolicy", "extraVolumes", "fullnameOverride", "hostNetwork", "imagePullPolicy", "imagePullSecrets",
	"initContainers", "logErrorOutputPaths", "logLevel", "logOutputPaths", "nameOverride", "nodeSelector",
	"podAnnotations", "podDisruptionBudget", "podLabels", "podSecurityContext", "priorityClassName", "replicas",
	"revisionHistoryLimit", "schedulerName", "service", "serviceAccount", "serviceMonitor", "settings", "strategy",
	"terminationGracePeriodSeconds", "tolerations", "topologySpreadConstraints",
}

// upstreamSettings are the keys of upstream's settings (same source).
var upstreamSettings = []string{
	"amiRefreshInterval", "awsFeatureGates", "batchIdleDuration", "batchMaxDuration", "clusterCABundle", "clusterEndpoint",
	"clusterName", "disableClusterStateObservability", "disableDryRun", "eksControlPlane", "enableZonalShift",
	"featureGates", "ignoreDRARequests", "interruptionQueue", "isolatedVPC", "minValuesPolicy", "preferencePolicy",
	"reservedENIs", "subnetRefreshInterval", "vmMemoryOverheadPercent",
}

// missingUpstreamValues are the keys of upstream's values the fixture values lack.
func missingUpstreamValues(values map[string]any) []string {
	var missing []string
	for _, k := range upstreamTopLevelValues {
		if _, ok := values[k]; !ok {
			missing = append(missing, k)
		}
	}
	settings, _ := values["settings"].(map[string]any)
	for _, k := range upstreamSettings {
		if _, ok := settings[k]; !ok {
			missing = append(missing, "settings."+k)
		}
	}
	return missing
}

// checkedKeys are the keys of values each of which honoured must check: the top-level keys, and
// the keys of the maps Karpenter's chart reads key by key, sorted.
func checkedKeys(values map[string]any) []string {
	var keys []string
	for k, v := range values {
		switch k {
		case "settings", "controller", "serviceMonitor":
			for sub := range v.(map[string]any) {
				keys = append(keys, k+"."+sub)
			}
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// helmTemplate runs helm template as renderWithValues does (valuesFile "" for none) and returns
// its output and error output; err is helm's exit.
func helmTemplate(t *testing.T, valuesFile string, set ...string) (out []byte, stderr string, err error) {
	t.Helper()
	args := []string{"template", "joiner", "joiner", "--namespace", "kube-system", "--include-crds", "--kube-version", "1.33.0"}
	if valuesFile != "" {
		args = append(args, "--values", valuesFile)
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(t.Context(), helm(t), args...)
	var e bytes.Buffer
	cmd.Stderr = &e
	out, err = cmd.Output()
	return out, e.String(), err
}

// rendered indexes a render by kind for the checks.
type rendered map[string]*unstructured.Unstructured

// obj is the object of kind, empty when the render has none.
func (r rendered) obj(kind string) *unstructured.Unstructured {
	if d, ok := r[kind]; ok {
		return d
	}
	return &unstructured.Unstructured{Object: map[string]any{}}
}

func (r rendered) field(kind string, path ...string) any {
	d, ok := r[kind]
	if !ok {
		return nil
	}
	v, _, _ := unstructured.NestedFieldNoCopy(d.Object, path...)
	return v
}

// container returns the pod's container (or init container, under "initContainers") named name.
func (r rendered) container(list, name string) map[string]any {
	cs, _ := r.field("Deployment", "spec", "template", "spec", list).([]any)
	for _, c := range cs {
		if c := c.(map[string]any); c["name"] == name {
			return c
		}
	}
	return nil
}

// env is the controller container's environment: literal values, and "from:<field>" for the
// others.
func (r rendered) env() map[string]string {
	out := map[string]string{}
	c := r.container("containers", "karpenter-controller")
	if c == nil {
		return out
	}
	for _, e := range c["env"].([]any) {
		e := e.(map[string]any)
		if v, ok := e["value"].(string); ok {
			out[e["name"].(string)] = v
		} else {
			out[e["name"].(string)] = fmt.Sprint("from:", e["valueFrom"])
		}
	}
	return out
}

// same reports whether got is want, compared as JSON does (YAML numbers and maps alike).
func same(got, want any) bool {
	g, err1 := yaml.Marshal(got)
	w, err2 := yaml.Marshal(want)
	return err1 == nil && err2 == nil && bytes.Equal(g, w)
}

// TestKarpenterValuesFile installs Joiner's chart with a Karpenter v1.15 values file: every value
// is honoured, found in the render with Joiner's equivalent meaning (environment variable, field or
// object), the controller reads the environment as the values say, and the objects pass the API
// server's dry run. A copy with one value Joiner refuses fails, naming the value and the reason.
func TestKarpenterValuesFile(t *testing.T) {
	raw, err := os.ReadFile(karpenterValues)
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatalf("reading %s: %v", karpenterValues, err)
	}
	settings := values["settings"].(map[string]any)
	if missing := missingUpstreamValues(values); len(missing) > 0 {
		t.Errorf("%s lacks Karpenter's values %v", karpenterValues, missing)
	}

	docs := renderWithValues(t, karpenterValues)
	r := rendered{}
	for _, d := range docs {
		r[d.GetKind()] = d
	}
	checks := honoured(r, values)
	vars := r.env()

	want := checkedKeys(values)
	if got := slices.Sorted(maps.Keys(checks)); !slices.Equal(got, want) {
		t.Errorf("the checks cover %v,\nthe fixture has %v: check every value", got, want)
	}
	for _, k := range want {
		if !checks[k] {
			t.Errorf("%s of %s is not honoured in the render", k, karpenterValues)
		}
	}

	// The controller reads its environment as the values say.
	gates, err := operator.ParseFeatureGates(vars["FEATURE_GATES"])
	if err != nil || gates != (operator.FeatureGates{SpotToSpotConsolidation: true}) {
		t.Errorf("FEATURE_GATES %q reads as %+v, %v", vars["FEATURE_GATES"], gates, err)
	}

	for _, d := range docs {
		if d.GetKind() == "ServiceMonitor" { // the test API server has no Prometheus Operator CRDs
			continue
		}
		if err := applyDryRun(t, d); err != nil {
			t.Errorf("%s/%s: server-side dry-run apply: %v", d.GetKind(), d.GetName(), err)
		}
	}

	// A copy of the file with one value Joiner refuses fails, naming the value and the reason.
	settings["enableZonalShift"] = true
	refused, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	copyFile := filepath.Join(t.TempDir(), "karpenter-values.yaml")
	if err := os.WriteFile(copyFile, refused, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := helmTemplate(t, copyFile)
	if err == nil || !strings.Contains(stderr, "settings.enableZonalShift: true is refused: Joiner does not read EKS zonal shifts") {
		t.Errorf("helm template with settings.enableZonalShift: true: err %v, output %s", err, stderr)
	}
}

// applyDryRun applies d to the test API server with server-side apply in dry-run mode.
func applyDryRun(t *testing.T, d *unstructured.Unstructured) error {
	return env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(d),
		client.DryRunAll, client.FieldOwner("chart-test"), client.ForceOwnership)
}

// TestKarpenterValuesRefused: each value of a Karpenter values file Joiner cannot honour fails
// helm template, naming the value and the reason, on top of the otherwise honoured fixture.
func TestKarpenterValuesRefused(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want []string // substrings of helm's error, all of them
	}{
		{name: "isolated VPC", set: []string{"settings.isolatedVPC=true"}, want: []string{"settings.isolatedVPC: true is refused", "Price List API"}},
		{name: "zonal shift", set: []string{"settings.enableZonalShift=true"}, want: []string{"settings.enableZonalShift: true is refused", "zonal shifts"}},
		{name: "reserved ENIs", set: []string{"settings.reservedENIs=1"}, want: []string{"settings.reservedENIs: 1 is refused", "network interface"}},
		{name: "DRA requests", set: []string{"settings.ignoreDRARequests=false"}, want: []string{"settings.ignoreDRARequests: false is refused", "Dynamic Resource Allocation"}},
		{name: "cluster state observability", set: []string{"settings.disableClusterStateObservability=true"}, want: []string{"settings.disableClusterStateObservability: true is refused"}},
		{name: "dry run", set: []string{"settings.disableDryRun=true"}, want: []string{"settings.disableDryRun: true is refused", "dry-run"}},
		{name: "AMI refresh", set: []string{"settings.amiRefreshInterval=5m"}, want: []string{"settings.amiRefreshInterval: 5m is refused", "once a minute"}},
		{name: "subnet refresh", set: []string{"settings.subnetRefreshInterval=10m"}, want: []string{"settings.subnetRefreshInterval: 10m is refused", "once a minute"}},
		{name: "log to a file", set: []string{"logOutputPaths[0]=/var/log/karpenter.log"}, want: []string{`logOutputPaths: "/var/log/karpenter.log" is refused`, "container's output"}},
		{name: "errors to a file", set: []string{"logErrorOutputPaths[0]=/var/log/karpenter-errors.log"}, want: []string{`logErrorOutputPaths: "/var/log/karpenter-errors.log" is refused`}},
		{name: "Karpenter's image", set: []string{"controller.image.repository=public.ecr.aws/karpenter/controller"}, want: []string{"controller.image.repository: public.ecr.aws/karpenter/controller is refused", "would run Karpenter"}},
		// Karpenter v0.x's settings, removed in v1: a file kept from then names them.
		{name: "v0 assumeRoleARN", set: []string{"settings.assumeRoleARN=arn:aws:iam::111122223333:role/Other"}, want: []string{"settings.assumeRoleARN: not a value"}},
		{name: "v0 settings.aws", set: []string{"settings.aws.clusterName=demo"}, want: []string{"settings.aws: not a value"}},
		{name: "unknown top-level", set: []string{"webhook.enabled=true"}, want: []string{"webhook: not a value"}},
		{name: "unknown controller value", set: []string{"controller.topologySpreadConstraints=x"}, want: []string{"controller.topologySpreadConstraints: not a value"}},
		{name: "unknown aws gate", set: []string{"settings.awsFeatureGates.other=true"}, want: []string{"settings.awsFeatureGates.other: not a value"}},
		{name: "unknown serviceMonitor value", set: []string{"serviceMonitor.interval=30s"}, want: []string{"serviceMonitor.interval: not a value"}},
		{name: "Karpenter's environment variable", set: []string{"controller.env[1].name=VM_MEMORY_OVERHEAD_PERCENT", "controller.env[1].value=0.1"}, want: []string{"controller.env VM_MEMORY_OVERHEAD_PERCENT: Karpenter's environment variable, which Joiner does not read"}},
		{name: "Karpenter's metrics port variable", set: []string{"controller.env[1].name=METRICS_PORT", "controller.env[1].value=9000"}, want: []string{"controller.env METRICS_PORT", "set controller.metrics.port"}},
		{
			name: "all at once",
			set:  []string{"settings.isolatedVPC=true", "settings.disableDryRun=true"},
			want: []string{"settings.isolatedVPC: true is refused", "settings.disableDryRun: true is refused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := helmTemplate(t, karpenterValues, tt.set...)
			if err == nil {
				t.Fatalf("helm template --set %v succeeded, want it refused", tt.set)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("helm template --set %v: %s\nwant it to contain %q", tt.set, stderr, w)
				}
			}
		})
	}
	// The values' defaults, written out, are honoured: nothing refused.
	if _, stderr, err := helmTemplate(t, karpenterValues, "settings.reservedENIs=0", "settings.eksControlPlane=false",
		"logOutputPaths[0]=stderr"); err != nil {
		t.Errorf("helm template with Karpenter's defaults: %v\n%s", err, stderr)
	}
}

// honoured holds, for every value of the fixture (top-level keys, and the keys of the maps
// Karpenter's chart reads key by key), whether the render r honours it.
func honoured(r rendered, values map[string]any) map[string]bool {
	checks := podHonoured(r, values)
	maps.Copy(checks, controllerHonoured(r, values))
	return checks
}

// podHonoured checks the values of the chart's objects and the pod.
func podHonoured(r rendered, values map[string]any) map[string]bool {
	pod := func(path ...string) any {
		return r.field("Deployment", append([]string{"spec", "template", "spec"}, path...)...)
	}
	ctr := r.container("containers", "karpenter-controller")
	endpoint := func() map[string]any {
		eps, _ := r.field("ServiceMonitor", "spec", "endpoints").([]any)
		if len(eps) != 1 {
			return nil
		}
		return eps[0].(map[string]any)
	}()
	hasRule := func(want any) bool {
		rules, _ := r.field("ClusterRole", "rules").([]any)
		return slices.ContainsFunc(rules, func(r any) bool { return same(r, want) })
	}
	sm := values["serviceMonitor"].(map[string]any)
	var spread map[string]any // the chart adds the pod selector
	if tsc, _ := pod("topologySpreadConstraints").([]any); len(tsc) == 1 {
		spread = tsc[0].(map[string]any)
	}
	return map[string]bool{
		"nameOverride":          r.obj("Deployment").GetLabels()["app.kubernetes.io/name"] == "joiner", // "" keeps the chart's name
		"fullnameOverride":      r.obj("Deployment").GetName() == values["fullnameOverride"],
		"additionalLabels":      r.obj("Deployment").GetLabels()["team"] == "platform" && r.obj("Service").GetLabels()["team"] == "platform",
		"additionalAnnotations": same(r.obj("Deployment").GetAnnotations(), values["additionalAnnotations"]),
		"imagePullPolicy":       ctr["imagePullPolicy"] == values["imagePullPolicy"],
		"imagePullSecrets":      same(pod("imagePullSecrets"), values["imagePullSecrets"]),
		"service":               same(r.obj("Service").GetAnnotations(), values["service"].(map[string]any)["annotations"]),
		"serviceAccount": r.obj("ServiceAccount").GetName() == "karpenter" && pod("serviceAccountName") == "karpenter" &&
			same(r.obj("ServiceAccount").GetAnnotations(), values["serviceAccount"].(map[string]any)["annotations"]),
		"additionalClusterRoleRules":       hasRule(values["additionalClusterRoleRules"].([]any)[0]),
		"serviceMonitor.enabled":           r["ServiceMonitor"] != nil,
		"serviceMonitor.additionalLabels":  r.obj("ServiceMonitor").GetLabels()["release"] == "kube-prometheus-stack",
		"serviceMonitor.relabelings":       same(endpoint["relabelings"], sm["relabelings"]),
		"serviceMonitor.metricRelabelings": same(endpoint["metricRelabelings"], sm["metricRelabelings"]),
		"serviceMonitor.endpointConfig":    endpoint["interval"] == "30s",
		"serviceMonitor.sampleLimit":       same(r.field("ServiceMonitor", "spec", "sampleLimit"), sm["sampleLimit"]),
		"replicas":                         same(r.field("Deployment", "spec", "replicas"), values["replicas"]),
		"revisionHistoryLimit":             same(r.field("Deployment", "spec", "revisionHistoryLimit"), values["revisionHistoryLimit"]),
		"strategy":                         same(r.field("Deployment", "spec", "strategy"), values["strategy"]),
		"podLabels":                        r.field("Deployment", "spec", "template", "metadata", "labels", "app.kubernetes.io/part-of") == "autoscaling",
		"podAnnotations":                   same(r.field("Deployment", "spec", "template", "metadata", "annotations"), values["podAnnotations"]),
		"podDisruptionBudget": r.obj("PodDisruptionBudget").GetName() == "karpenter" &&
			same(r.field("PodDisruptionBudget", "spec", "maxUnavailable"), 1),
		// Karpenter's values merge into Joiner's defaults (non-root 65532).
		"podSecurityContext":            same(pod("securityContext", "fsGroup"), 65532) && same(pod("securityContext", "seccompProfile"), map[string]any{"type": "RuntimeDefault"}),
		"priorityClassName":             pod("priorityClassName") == values["priorityClassName"],
		"terminationGracePeriodSeconds": same(pod("terminationGracePeriodSeconds"), values["terminationGracePeriodSeconds"]),
		"hostNetwork":                   pod("hostNetwork") == nil, // false: the pod's own network
		"schedulerName":                 pod("schedulerName") == values["schedulerName"],
		"dnsPolicy":                     pod("dnsPolicy") == values["dnsPolicy"],
		"dnsConfig":                     same(pod("dnsConfig"), values["dnsConfig"]),
		"initContainers":                same(pod("initContainers"), values["initContainers"]),
		"nodeSelector":                  same(pod("nodeSelector"), values["nodeSelector"]),
		"affinity":                      same(pod("affinity", "nodeAffinity"), values["affinity"].(map[string]any)["nodeAffinity"]),
		"topologySpreadConstraints":     spread != nil && spread["whenUnsatisfiable"] == "ScheduleAnyway" && spread["labelSelector"] != nil,
		"tolerations":                   same(pod("tolerations"), values["tolerations"]),
		"extraVolumes":                  same(pod("volumes"), values["extraVolumes"]),
	}
}

// controllerHonoured checks the values of the controller container and its settings.
func controllerHonoured(r rendered, values map[string]any) map[string]bool {
	vars := r.env()
	settings := values["settings"].(map[string]any)
	controller := values["controller"].(map[string]any)
	ctr := r.container("containers", "karpenter-controller")
	sidecar := r.container("containers", "log-shipper")
	return map[string]bool{
		"controller.containerName": strings.Contains(vars["GOMEMLIMIT"], "karpenter-controller"),
		"controller.env":           vars["AWS_STS_REGIONAL_ENDPOINTS"] == "regional",
		"controller.envFrom":       same(ctr["envFrom"], controller["envFrom"]),
		// Empty appArmorProfile and seLinuxOptions are left out; Joiner's defaults stay.
		"controller.securityContext": same(ctr["securityContext"], map[string]any{
			"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true, "capabilities": map[string]any{"drop": []any{"ALL"}},
			"seccompProfile": map[string]any{"type": "RuntimeDefault"},
		}),
		"controller.resources":           same(ctr["resources"], controller["resources"]),
		"controller.extraVolumeMounts":   same(ctr["volumeMounts"], controller["extraVolumeMounts"]),
		"controller.sidecarContainer":    sidecar["image"] == "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.2",
		"controller.sidecarVolumeMounts": sidecar != nil && same(sidecar["volumeMounts"], append(slices.Clone(controller["extraVolumeMounts"].([]any)), controller["sidecarVolumeMounts"].([]any)...)),
		"controller.metrics":             vars["METRICS_BIND_ADDRESS"] == ":8000" && strings.Contains(fmt.Sprint(r.field("Service", "spec", "ports")), "port:8000"),
		"controller.healthProbe":         vars["HEALTH_PROBE_BIND_ADDRESS"] == ":8001",
		"logLevel":                       vars["LOG_LEVEL"] == "debug",
		// Joiner logs to the container's output; stdout and stderr are what it can honour
		// (refusals of the others: TestKarpenterValuesRefused).
		"logOutputPaths":                   true,
		"logErrorOutputPaths":              true,
		"settings.batchMaxDuration":        vars["BATCH_MAX_DURATION"] == settings["batchMaxDuration"],
		"settings.batchIdleDuration":       vars["BATCH_IDLE_DURATION"] == settings["batchIdleDuration"],
		"settings.preferencePolicy":        vars["PREFERENCE_POLICY"] == settings["preferencePolicy"],
		"settings.minValuesPolicy":         vars["MIN_VALUES_POLICY"] == settings["minValuesPolicy"],
		"settings.clusterCABundle":         vars["CLUSTER_CA_BUNDLE"] == settings["clusterCABundle"],
		"settings.vmMemoryOverheadPercent": vars["VM_MEMORY_OVERHEAD_PERCENT"] == fmt.Sprint(settings["vmMemoryOverheadPercent"]),
		"settings.clusterName":             vars["CLUSTER_NAME"] == settings["clusterName"],
		"settings.clusterEndpoint":         vars["CLUSTER_ENDPOINT"] == settings["clusterEndpoint"],
		"settings.interruptionQueue":       vars["INTERRUPTION_QUEUE"] == settings["interruptionQueue"],
		"settings.featureGates":            strings.Contains(vars["FEATURE_GATES"], "SpotToSpotConsolidation=true"),
		// The values below are Joiner's behaviour as they stand (another is refused:
		// TestKarpenterValuesRefused); docs/karpenter-settings.md says why.
		"settings.isolatedVPC":                      settings["isolatedVPC"] == false,
		"settings.eksControlPlane":                  settings["eksControlPlane"] == true,
		"settings.enableZonalShift":                 settings["enableZonalShift"] == false,
		"settings.reservedENIs":                     settings["reservedENIs"] == "0",
		"settings.ignoreDRARequests":                settings["ignoreDRARequests"] == true,
		"settings.disableClusterStateObservability": settings["disableClusterStateObservability"] == false,
		"settings.disableDryRun":                    settings["disableDryRun"] == false,
		"settings.amiRefreshInterval":               settings["amiRefreshInterval"] == "1m",
		"settings.subnetRefreshInterval":            settings["subnetRefreshInterval"] == "1m",
		// Joiner's EC2NodeClass CRD carries its validation rules whatever the gate
		// (docs/feature-gates.md).
		"settings.awsFeatureGates": true,
	}
}

// TestKarpenterFeatureGates: the chart refuses a feature gate at true exactly when the controller
// would (operator.ParseFeatureGates), naming the gate, so that the two cannot drift apart; a name
// that is no gate is refused by both.
func TestKarpenterFeatureGates(t *testing.T) {
	for _, name := range append(operator.FeatureGateNames(), "Drift") {
		value := strings.ToLower(name[:1]) + name[1:]
		t.Run(name, func(t *testing.T) {
			_, controllerErr := operator.ParseFeatureGates(name + "=true")
			_, stderr, err := helmTemplate(t, karpenterValues, "settings.featureGates."+value+"=true")
			switch {
			case controllerErr == nil && err != nil:
				t.Errorf("the controller takes %s=true, but helm template refuses it: %s", name, stderr)
			case controllerErr != nil && err == nil:
				t.Errorf("the controller refuses %s=true (%v), but helm template renders it", name, controllerErr)
			case err != nil && !strings.Contains(stderr, "settings.featureGates."+value+":"):
				t.Errorf("helm template refuses %s=true without naming settings.featureGates.%s: %s", name, value, stderr)
			}
		})
	}
}
