package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/internal/e2estack"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// hostileClass is the sample EC2NodeClass (config/samples) that each hostile class patches.
const hostileClass = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// hostilePool is an on-demand NodePool of the sample class that each hostile NodePool patches.
const hostilePool = `
apiVersion: karpenter.sh/v1
kind: NodePool
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
`

// hostileCase is one hostile or broken input. Refused inputs must be refused by the API server
// with an error containing each of refused (the field and what to do); accepted ones must, within
// the table's deadline, make want true: a condition or an event naming the field and the fix.
type hostileCase struct {
	name string
	// pool and class are JSON merge patches (in YAML) over hostilePool and hostileClass; the
	// object is named after the case. A pool patch of "" makes no NodePool, likewise for class.
	pool, class string
	// pods, when set, is a Deployment of pods that ask for the case's NodePool.
	pods *appsv1.Deployment
	// refused is what the API server's refusal must say; nil: the input is accepted.
	refused []string
	want    check
}

// check is an expectation polled until it holds.
type check func(ctx context.Context, c client.Client) (bool, string, error)

// TestHostileInputs applies a table of hostile and broken NodePools, EC2NodeClasses and pods to
// one stack: those the API server refuses must be refused with the field named, those it accepts
// must each get a condition or event naming the field and the fix; an AMI is deregistered
// mid-run; and throughout, a healthy NodePool's pods keep getting nodes.
func TestHostileInputs(t *testing.T) {
	// missing-role's spec.role names a role no policy generated for the cluster grants: the join
	// check's iam:GetRole of it is refused, as it would be in an account set up with least privilege.
	stack := e2estack.StartExpectingDenials(t, bins, []string{"iam:GetRole arn:aws:iam::111122223333:role/NoSuchRole"})
	ctx := t.Context()
	namespace(t, ctx, stack, "healthy")
	namespace(t, ctx, stack, "hostile")
	healthy := nodePool("healthy", 50, "")
	steady := deployment("healthy", "steady", 2, "1", "1Gi", onPool("healthy"))
	if err := stack.Apply(ctx, healthy, steady); err != nil {
		t.Fatal(err)
	}
	keepsServing := func(replicas int32) {
		t.Helper()
		scale(t, ctx, stack.Client, steady, replicas)
		eventually(t, 3*time.Minute, fmt.Sprintf("the healthy NodePool's %d pods Running", replicas), func(ctx context.Context) (bool, string, error) {
			_, running, _, err := podCounts(ctx, stack.Client, "healthy")
			return running == int(replicas), fmt.Sprintf("%d/%d Running", running, replicas), err
		})
	}
	keepsServing(2)

	cases := hostileCases()
	if len(cases) < 40 {
		t.Fatalf("%d hostile inputs, want at least 40", len(cases))
	}
	// Pods come after every NodePool and class is known to the controller: a pod's explanation
	// is an event whose note client-go freezes at the first one for that pod (the note is not in
	// its series key), so a pod explained before its NodePool was seen would keep saying so.
	pending := map[string]check{}
	known := map[string]check{}
	var pods []client.Object
	for _, hc := range cases {
		objects := hc.objects(t)
		if hc.pods != nil {
			pods = append(pods, objects[len(objects)-1])
			objects = objects[:len(objects)-1]
		}
		err := stack.Apply(ctx, objects...)
		switch {
		case hc.refused != nil && err == nil:
			t.Errorf("%s: the API server accepted it, want a refusal naming %q", hc.name, hc.refused)
		case hc.refused != nil:
			for _, s := range hc.refused {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: the refusal does not say %q: %v", hc.name, s, err)
				}
			}
		case err != nil:
			t.Errorf("%s: refused, want it accepted and reported: %v", hc.name, err)
		default:
			pending[hc.name] = hc.want
			if hc.pool != "" {
				known[hc.name] = poolSeen(hc.name)
			}
		}
	}
	waitAll(t, ctx, stack.Client, 2*time.Minute, known)
	if err := stack.Apply(ctx, pods...); err != nil {
		t.Fatal(err)
	}
	// The controller, busy with every hostile input at once, still serves the healthy NodePool.
	keepsServing(4)
	waitAll(t, ctx, stack.Client, 3*time.Minute, pending)

	// The AMI of a class that works is deregistered mid-run: the class and its NodePool say so,
	// naming amiSelectorTerms; the healthy NodePool, on another AMI, keeps launching.
	doomed := hostileCase{name: "doomed-ami", class: `spec: {amiFamily: AL2, amiSelectorTerms: [{name: "amazon-eks-node-1.33-v*", owner: amazon}]}`}
	doomed.pool = `spec: {template: {spec: {nodeClassRef: {name: doomed-ami}}}}`
	if err := stack.Apply(ctx, doomed.objects(t)...); err != nil {
		t.Fatal(err)
	}
	waitAll(t, ctx, stack.Client, 2*time.Minute, map[string]check{
		"doomed-ami resolves first": classCondition("doomed-ami", awsv1.ConditionTypeAMIsReady, metav1.ConditionTrue),
	})
	deregistered := deregisterImages(t, ctx, stack, "amazon-eks-node-1.33-v*")
	t.Logf("deregistered %v", deregistered)
	keepsServing(6)
	waitAll(t, ctx, stack.Client, 3*time.Minute, map[string]check{
		"doomed-ami class": classCondition("doomed-ami", awsv1.ConditionTypeAMIsReady, metav1.ConditionFalse, "spec.amiSelectorTerms"),
		"doomed-ami pool":  poolCondition("doomed-ami", v1.ConditionTypeReady, metav1.ConditionFalse, "spec.amiSelectorTerms"),
	})
	checkOneInstancePerNodeClaim(t, ctx, stack)
}

// objects are the case's NodePool, EC2NodeClass and Deployment, as the API server receives them.
func (hc hostileCase) objects(t *testing.T) []client.Object {
	t.Helper()
	var out []client.Object
	for _, part := range []struct{ base, patch string }{{hostileClass, hc.class}, {hostilePool, hc.pool}} {
		if part.patch == "" {
			continue
		}
		base, err := yaml.YAMLToJSON([]byte(part.base))
		if err != nil {
			t.Fatal(err)
		}
		patch, err := yaml.YAMLToJSON([]byte(part.patch))
		if err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		merged, err := jsonpatch.MergePatch(base, patch)
		if err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(merged); err != nil {
			t.Fatalf("%s: %v", hc.name, err)
		}
		u.SetName(hc.name)
		out = append(out, u)
	}
	if hc.pods != nil {
		out = append(out, hc.pods)
	}
	return out
}

// waitAll polls every check until all hold, failing the test with those that did not.
func waitAll(t *testing.T, ctx context.Context, c client.Client, timeout time.Duration, checks map[string]check) {
	t.Helper()
	last := map[string]string{}
	eventually(t, timeout, fmt.Sprintf("%d hostile inputs reported", len(checks)), func(ctx context.Context) (bool, string, error) {
		for name, ck := range checks {
			done, state, err := ck(ctx, c)
			if err != nil {
				// A busy API server: this check is open, the others are still looked at, and
				// the failure names every open input.
				done, state = false, err.Error()
			}
			if done {
				delete(checks, name)
				continue
			}
			last[name] = state
		}
		var open []string
		for name := range checks {
			open = append(open, name+": "+last[name])
		}
		slices.Sort(open)
		return len(checks) == 0, strings.Join(open, "\n"), nil
	})
}

// onPool makes pods ask for the NodePool name.
func onPool(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		if s.NodeSelector == nil {
			s.NodeSelector = map[string]string{}
		}
		s.NodeSelector[v1.NodePoolLabelKey] = name
	}
}

// hostilePods is one pod in namespace hostile asking for the NodePool name, mutated.
func hostilePods(name, cpu string, mutate ...func(*corev1.PodSpec)) *appsv1.Deployment {
	return deployment("hostile", name, 1, cpu, "128Mi", append([]func(*corev1.PodSpec){onPool(name)}, mutate...)...)
}

// conditionCheck holds when the object's condition has the status and its message contains
// each of says.
func conditionCheck(obj client.Object, name, condition string, status metav1.ConditionStatus, says ...string) check {
	return func(ctx context.Context, c client.Client) (bool, string, error) {
		o := obj.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, o); err != nil {
			return false, "", err
		}
		var conds []metav1.Condition
		switch o := o.(type) {
		case *v1.NodePool:
			conds = o.Status.Conditions
		case *awsv1.EC2NodeClass:
			conds = o.Status.Conditions
		}
		cond := meta.FindStatusCondition(conds, condition)
		if cond == nil || cond.Status != status {
			return false, fmt.Sprintf("%s %v", condition, cond), nil
		}
		for _, s := range says {
			if !strings.Contains(cond.Message, s) {
				return false, fmt.Sprintf("%s=%s: %q lacks %q", condition, cond.Status, cond.Message, s), nil
			}
		}
		return true, "", nil
	}
}

// poolSeen holds once the controller has reported on the NodePool.
func poolSeen(name string) check {
	return func(ctx context.Context, c client.Client) (bool, string, error) {
		var np v1.NodePool
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &np); err != nil {
			return false, "", err
		}
		return meta.FindStatusCondition(np.Status.Conditions, v1.ConditionTypeNodeClassReady) != nil, "no NodeClassReady yet", nil
	}
}

func poolCondition(name, condition string, status metav1.ConditionStatus, says ...string) check {
	return conditionCheck(&v1.NodePool{}, name, condition, status, says...)
}

func classCondition(name, condition string, status metav1.ConditionStatus, says ...string) check {
	return conditionCheck(&awsv1.EC2NodeClass{}, name, condition, status, says...)
}

// podEvent holds when a pod of the Deployment name (namespace hostile) has an event with the
// reason whose message contains each of says.
func podEvent(name, reason string, says ...string) check {
	return func(ctx context.Context, c client.Client) (bool, string, error) {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace("hostile")); err != nil {
			return false, "", err
		}
		last := "no event " + reason + " from joiner"
	next:
		for _, e := range events.Items {
			// kube-scheduler reports FailedScheduling too; only Joiner's events are asserted.
			if e.InvolvedObject.Kind != "Pod" || !strings.HasPrefix(e.InvolvedObject.Name, name+"-") || e.Reason != reason ||
				e.ReportingController == "default-scheduler" || e.Source.Component == "default-scheduler" {
				continue
			}
			last = fmt.Sprintf("%s/%s: %s", e.ReportingController, e.Source.Component, e.Message)
			for _, s := range says {
				if !strings.Contains(e.Message, s) {
					continue next
				}
			}
			return true, "", nil
		}
		return false, last, nil
	}
}

// hostileRunning holds when every pod of the Deployment name (namespace hostile) runs.
func hostileRunning(name string) check {
	return func(ctx context.Context, c client.Client) (bool, string, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace("hostile"), client.MatchingLabels{"app": name}); err != nil {
			return false, "", err
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false, fmt.Sprintf("pod %s %s", p.Name, p.Status.Phase), nil
			}
		}
		return len(pods.Items) > 0, "no pod", nil
	}
}

// deregisterImages deregisters, as the account's administrator through the SDK, every image
// whose name matches the pattern, and returns their ids.
func deregisterImages(t *testing.T, ctx context.Context, stack *localstack.Stack, pattern string) []string {
	t.Helper()
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{
		Region: localstack.DefaultRegion, Endpoint: stack.EmulatorURL,
		Credentials: credentials.NewStaticCredentialsProvider(adminAccessKey, "local-stack", ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	api := ec2.NewFromConfig(cfg)
	out, err := api.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{pattern}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, img := range out.Images {
		if _, err := api.DeregisterImage(ctx, &ec2.DeregisterImageInput{ImageId: img.ImageId}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *img.ImageId)
	}
	if len(ids) == 0 {
		t.Fatalf("no image matches %s", pattern)
	}
	return ids
}

// requirements are n valid requirements on labels of the operator's own domain.
func requirements(n int) string {
	var b strings.Builder
	b.WriteString("spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, ", {key: example.com/label-%d, operator: In, values: [v%d]}", i, i)
	}
	b.WriteString("]}}}")
	return b.String()
}

func hostileCases() []hostileCase {
	const fieldKubelet = "spec.kubelet"
	huge := strings.Repeat("# padding that pushes the userData past EC2's 16 KiB limit\n", 320)
	return []hostileCase{
		// NodePools the API server refuses.
		{name: "weight-zero", pool: `spec: {weight: 0}`, refused: []string{"spec.weight", "greater than or equal to 1"}},
		{name: "weight-over", pool: `spec: {weight: 101}`, refused: []string{"spec.weight", "less than or equal to 100"}},
		{name: "weight-text", pool: `spec: {weight: heavy}`, refused: []string{"spec.weight", "integer"}},
		{name: "reqs-101", pool: requirements(101), refused: []string{"spec.template.spec.requirements", "must have at most 100 items"}},
		{name: "req-in-empty", pool: `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: In, values: []}]}}}`, refused: []string{"spec.template.spec.requirements[0]"}},
		{name: "req-gt-text", pool: `spec: {template: {spec: {requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: [many]}]}}}`, refused: []string{"spec.template.spec.requirements[0]"}},
		{name: "req-hostname", pool: `spec: {template: {spec: {requirements: [{key: kubernetes.io/hostname, operator: In, values: [a]}]}}}`, refused: []string{"spec.template.spec.requirements[0]", "kubernetes.io/hostname"}},
		{name: "req-operator", pool: `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: Maybe, values: [amd64]}]}}}`, refused: []string{"spec.template.spec.requirements[0].operator", "Unsupported value"}},
		{name: "req-minvalues", pool: `spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large], minValues: 2}]}}}`, refused: []string{"spec.template.spec.requirements[0]", "minValues"}},
		{name: "taint-zero-width", pool: "spec: {template: {spec: {taints: [{key: \"gpu\u200b\", effect: NoSchedule}]}}}", refused: []string{"spec.template.spec.taints[0].key"}},
		{name: "taint-emoji-value", pool: "spec: {template: {spec: {taints: [{key: team, value: \"🚀\", effect: NoSchedule}]}}}", refused: []string{"spec.template.spec.taints[0].value"}},
		{name: "taint-rtl-override", pool: "spec: {template: {spec: {startupTaints: [{key: \"\u202eevil\", effect: NoSchedule}]}}}", refused: []string{"spec.template.spec.startupTaints[0].key"}},
		{name: "taint-effect", pool: `spec: {template: {spec: {taints: [{key: team, effect: NoWhere}]}}}`, refused: []string{"spec.template.spec.taints", "effect"}},
		{name: "label-too-long", pool: fmt.Sprintf(`spec: {template: {metadata: {labels: {team: %s}}}}`, strings.Repeat("x", 64)), refused: []string{"spec.template.metadata.labels.team"}},
		{name: "label-restricted", pool: `spec: {template: {metadata: {labels: {karpenter.sh/nodepool: other}}}}`, refused: []string{"spec.template.metadata.labels"}},
		{name: "limits-text", pool: `spec: {limits: {cpu: lots}}`, refused: []string{"spec.limits.cpu"}},
		{name: "consolidate-after", pool: `spec: {disruption: {consolidateAfter: soon}}`, refused: []string{"spec.disruption.consolidateAfter"}},
		{name: "budget-percent", pool: `spec: {disruption: {budgets: [{nodes: "150%"}]}}`, refused: []string{"spec.disruption.budgets[0].nodes"}},
		{name: "budget-schedule", pool: `spec: {disruption: {budgets: [{nodes: "1", schedule: "@daily"}]}}`, refused: []string{"spec.disruption.budgets"}},
		{name: "nodeclass-kind", pool: `spec: {template: {spec: {nodeClassRef: {kind: AKSNodeClass}}}}`, refused: []string{"spec.template.spec.nodeClassRef.kind"}},
		{name: "expire-after", pool: `spec: {template: {spec: {expireAfter: "1 day"}}}`, refused: []string{"spec.template.spec.expireAfter"}},
		{name: "budget-reason", pool: `spec: {disruption: {budgets: [{nodes: "1", reasons: [Whenever]}]}}`, refused: []string{"spec.disruption.budgets[0].reasons[0]", "Unsupported value"}},

		// EC2NodeClasses the API server refuses.
		{name: "no-role", class: `spec: {role: null}`, refused: []string{"spec", "role", "instanceProfile"}},
		{name: "role-and-profile", class: `spec: {instanceProfile: some-profile}`, refused: []string{"spec", "role", "instanceProfile"}},
		{name: "windows", class: `spec: {amiFamily: Windows2022, amiSelectorTerms: [{tags: {os: windows}}]}`, refused: []string{"spec.amiFamily", "Unsupported value"}},
		{name: "alias-family", class: `spec: {amiSelectorTerms: [{alias: ubuntu@latest}]}`, refused: []string{"spec.amiSelectorTerms[0].alias"}},
		{name: "alias-mismatch", class: `spec: {amiFamily: AL2}`, refused: []string{"spec.amiFamily", "does not match the alias"}},
		{name: "tag-cluster", class: `spec: {tags: {kubernetes.io/cluster/demo: owned}}`, refused: []string{"spec.tags"}},
		{name: "tag-aws", class: `spec: {tags: {"aws:owner": me}}`, refused: []string{"spec.tags", "aws:"}},
		{name: "two-roots", class: `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 20Gi}}, {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 20Gi}}]}`, refused: []string{"spec.blockDeviceMappings", "rootVolume"}},
		{name: "volume-huge", class: `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Ti}}]}`, refused: []string{"spec.blockDeviceMappings[0].ebs.volumeSize"}},
		{name: "volume-type", class: `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 20Gi, volumeType: gp9}}]}`, refused: []string{"spec.blockDeviceMappings[0].ebs.volumeType", "Unsupported value"}},
		{name: "volume-empty", class: `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {encrypted: true}}]}`, refused: []string{"spec.blockDeviceMappings[0].ebs"}},
		{name: "cluster-dns", class: `spec: {kubelet: {clusterDNS: [dns.cluster.local]}}`, refused: []string{fieldKubelet + ".clusterDNS", "IP addresses"}},
		{name: "image-gc", class: `spec: {kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 80}}`, refused: []string{fieldKubelet, "imageGCHighThresholdPercent must be greater"}},
		{name: "eviction-percent", class: `spec: {kubelet: {evictionHard: {memory.available: "150%"}}}`, refused: []string{fieldKubelet + ".evictionHard", "between 0% and 100%"}},
		{name: "reserved-key", class: `spec: {kubelet: {systemReserved: {gpu: "1"}}}`, refused: []string{fieldKubelet + ".systemReserved", "cpu, memory, ephemeral-storage or pid"}},
		{name: "eviction-soft-grace", class: `spec: {kubelet: {evictionSoft: {memory.available: 500Mi}}}`, refused: []string{fieldKubelet, "evictionSoftGracePeriod"}},
		{name: "max-pods", class: `spec: {kubelet: {maxPods: -1}}`, refused: []string{fieldKubelet + ".maxPods"}},
		{name: "hop-limit", class: `spec: {metadataOptions: {httpPutResponseHopLimit: 0}}`, refused: []string{"spec.metadataOptions.httpPutResponseHopLimit"}},
		{name: "no-subnet-terms", class: `spec: {subnetSelectorTerms: []}`, refused: []string{"spec.subnetSelectorTerms"}},
		{name: "subnet-id", class: `spec: {subnetSelectorTerms: [{id: sub-123}]}`, refused: []string{"spec.subnetSelectorTerms[0].id"}},
		{name: "sg-id-and-tags", class: `spec: {securityGroupSelectorTerms: [{id: sg-123, tags: {a: b}}]}`, refused: []string{"spec.securityGroupSelectorTerms[0]"}},

		// Inputs the API server accepts, which the controller must report.
		{name: "missing-class", pool: `spec: {template: {spec: {nodeClassRef: {name: ghost}}}}`, pods: hostilePods("missing-class", "100m"),
			want: poolCondition("missing-class", v1.ConditionTypeNodeClassReady, metav1.ConditionFalse, "EC2NodeClass ghost does not exist", "create it")},
		{name: "limits-exceeded", pool: `spec: {limits: {cpu: "0"}}`, pods: hostilePods("limits-exceeded", "100m"),
			want: podEvent("limits-exceeded", "FailedScheduling", "limits-exceeded", "limit")},
		{name: "conflicting-selectors", pool: `spec: {template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}, {key: kubernetes.io/arch, operator: In, values: [amd64]}]}}}`,
			pods: hostilePods("conflicting-selectors", "100m", func(s *corev1.PodSpec) { s.NodeSelector[corev1.LabelArchStable] = "arm64" }),
			want: podEvent("conflicting-selectors", "FailedScheduling", "conflicting-selectors", corev1.LabelArchStable)},
		{name: "no-such-type", pool: `spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m99.mega]}]}}}`, pods: hostilePods("no-such-type", "100m"),
			want: podEvent("no-such-type", "FailedScheduling", "no-such-type", "m99.mega")},
		{name: "too-big", pool: `spec: {}`, pods: hostilePods("too-big", "900"),
			want: podEvent("too-big", "FailedScheduling", "too-big", "cpu")},
		{name: "reqs-97", pool: requirements(97), pods: hostilePods("reqs-97", "100m"), want: hostileRunning("reqs-97")},
		{name: "reqs-100", pool: requirements(100), pods: hostilePods("reqs-100", "100m"),
			want: podEvent("reqs-100", "FailedScheduling", "reqs-100", "TooManyRequirements", "spec.template.spec.requirements")},
		{name: "huge-userdata", class: fmt.Sprintf("spec: {userData: %q}", huge), pool: `spec: {template: {spec: {nodeClassRef: {name: huge-userdata}}}}`,
			want: classCondition("huge-userdata", v1.ConditionTypeReady, metav1.ConditionFalse, "spec.userData")},
		{name: "bad-userdata", class: `spec: {userData: "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: [NodeConfig\n--B--\n"}`,
			want: classCondition("bad-userdata", v1.ConditionTypeReady, metav1.ConditionFalse, "spec.userData")},
		{name: "no-subnets", class: `spec: {subnetSelectorTerms: [{tags: {karpenter.sh/discovery: nowhere}}]}`,
			want: classCondition("no-subnets", awsv1.ConditionTypeSubnetsReady, metav1.ConditionFalse, "spec.subnetSelectorTerms")},
		{name: "no-security-groups", class: `spec: {securityGroupSelectorTerms: [{id: sg-0000000000}]}`,
			want: classCondition("no-security-groups", awsv1.ConditionTypeSecurityGroupsReady, metav1.ConditionFalse, "spec.securityGroupSelectorTerms")},
		{name: "no-amis", class: `spec: {amiFamily: AL2023, amiSelectorTerms: [{tags: {team: nobody}}]}`,
			want: classCondition("no-amis", awsv1.ConditionTypeAMIsReady, metav1.ConditionFalse, "spec.amiSelectorTerms")},
		{name: "missing-profile", class: `spec: {role: null, instanceProfile: no-such-profile}`,
			want: classCondition("missing-profile", awsv1.ConditionTypeInstanceProfileReady, metav1.ConditionFalse, "spec.instanceProfile")},
		{name: "missing-role", class: `spec: {role: NoSuchRole}`,
			want: classCondition("missing-role", v1.ConditionTypeReady, metav1.ConditionFalse, "spec.role")},
		{name: "memory-limit", pool: `spec: {limits: {memory: 1Mi}}`, pods: hostilePods("memory-limit", "100m"),
			want: podEvent("memory-limit", "FailedScheduling", "memory-limit", "limit")},
		{name: "untolerated-taint", pool: `spec: {template: {spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}}}`, pods: hostilePods("untolerated-taint", "100m"),
			want: podEvent("untolerated-taint", "FailedScheduling", "untolerated-taint", "dedicated")},
		{name: "zone-nowhere", pool: `spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [mars-1a]}]}}}`, pods: hostilePods("zone-nowhere", "100m"),
			want: podEvent("zone-nowhere", "FailedScheduling", "zone-nowhere", "mars-1a")},
	}
}
