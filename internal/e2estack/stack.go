package e2estack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/chartrbac"
	"github.com/joinerhq/joiner/pkg/localstack"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

// FastEmulator are emulator timings that keep the tests short: real EC2 pends about 10s and
// boots in 30-60s; the lifecycle is the same, only quicker.
var FastEmulator = []string{"--pending-for", "1s", "--boot-delay", "2s", "--shutting-down-for", "1s"}

// Start starts the local stack with the emulator and the controller, and the sample
// EC2NodeClass and aws-auth mapping; it is stopped when the test ends. The controller runs with
// least privilege (LeastPrivilege): a permission the chart or the generated IAM policy lacks
// fails the test. The controller runs
// without leader election: each test has one replica, and a killed leader's Lease would only
// delay its successor by the lease duration. Its batches wait 3s for more pods (1s by default), so
// that a burst of pods on a loaded machine still reaches it as one batch. controllerArgs are added
// to the controller's flags.
func Start(t *testing.T, p *Programs, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	return start(t, p, privilegeChecks{refusals: true}, controllerArgs...)
}

// StartExpectingDenials is Start for a test whose inputs name AWS resources the generated policy
// rightly does not grant (an EC2NodeClass's spec.role naming a role that is not the cluster's
// node role): a denial of one of expected ("ACTION RESOURCE", e.g.
// "iam:GetRole arn:aws:iam::111122223333:role/NoSuchRole") is the least privilege working, not
// a gap in the policy; any other denial still fails the test.
func StartExpectingDenials(t *testing.T, p *Programs, expected []string, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	return start(t, p, privilegeChecks{refusals: true, expectedDenials: expected}, controllerArgs...)
}

// privilegeChecks are what the end of a test checks of the controller's privileges.
type privilegeChecks struct {
	// refusals checks the API server's refusals of the chart's ServiceAccount.
	refusals bool
	// expectedDenials are AWS denials ("ACTION RESOURCE") the test's inputs cause on purpose.
	expectedDenials []string
}

// StartRestartable is Start for a test that restarts kube-apiserver: the API server refuses
// requests for a moment after it starts again, until its RBAC authorizer's caches are filled,
// so the controller's refused requests are not checked at the end (denied AWS calls still are).
func StartRestartable(t *testing.T, p *Programs, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	return start(t, p, privilegeChecks{}, controllerArgs...)
}

func start(t *testing.T, p *Programs, checks privilegeChecks, controllerArgs ...string) *localstack.Stack {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	work := t.TempDir()
	var out bytes.Buffer
	stack, err := localstack.Start(ctx, p.LeastPrivilege(localstack.Options{
		AssetsDir: p.Assets, WorkDir: work, Out: &out,
		EmulatorPath: p.Awsemu, EmulatorArgs: FastEmulator,
		JoinerPath: p.Controller, ControllerArgs: append([]string{"--leader-elect=false", "--log-level", "debug", "--batch-idle-duration", "3s"}, controllerArgs...),
	}))
	if err != nil {
		t.Fatalf("starting the local stack: %v\n%s", err, out.String())
	}
	t.Logf("emulator rate limits: %s ($%s)", stack.EmulatorRateLimits, localstack.RateLimitsEnv)
	t.Cleanup(func() {
		// Deferred, so that the logs are kept and the stack stopped even when the check below
		// ends the test with t.Fatal (a stack left running took a core from the next test).
		defer func() {
			if t.Failed() {
				DumpLogs(t, filepath.Join(work, "logs"))
				keepLogs(t, filepath.Join(work, "logs"))
			}
			if err := stack.Stop(); err != nil {
				t.Errorf("stopping the stack: %v", err)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		logLimits(t, ctx, stack)
		if !t.Failed() {
			// Whatever the test checked, nothing the controller asked for may have been refused.
			checkPrivileges(t, ctx, stack, false, checks)
		}
	})
	objects, err := localstack.SampleObjects("EC2NodeClass", "ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	if err := stack.Apply(ctx, append(objects, EKSDaemonSets()...)...); err != nil {
		t.Fatal(err)
	}
	return stack
}

// EKSDaemonSets are the DaemonSets every EKS cluster runs on every node, with the requests their
// EKS add-ons set, so that plans and measurements are of a real cluster's shape: aws-node (the
// VPC CNI, 25m, and its network-policy agent, 25m), kube-proxy (100m) and ebs-csi-node (three
// containers of 10m and 40Mi). Like the real ones they tolerate every taint and are
// system-node-critical; the emulated kubelets report their pods Running.
func EKSDaemonSets() []client.Object {
	ds := func(name string, containers ...[2]string) *appsv1.DaemonSet {
		labels := map[string]string{"k8s-app": name}
		d := &appsv1.DaemonSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						PriorityClassName:             "system-node-critical",
						Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
						TerminationGracePeriodSeconds: new(int64(1)),
					},
				},
			},
		}
		for i, c := range containers {
			requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c[0])}
			if c[1] != "" {
				requests[corev1.ResourceMemory] = resource.MustParse(c[1])
			}
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{
				Name: fmt.Sprintf("c%d", i), Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
				Resources: corev1.ResourceRequirements{Requests: requests},
			})
		}
		return d
	}
	return []client.Object{
		ds("aws-node", [2]string{"25m", ""}, [2]string{"25m", ""}),
		ds("kube-proxy", [2]string{"100m", ""}),
		ds("ebs-csi-node", [2]string{"10m", "40Mi"}, [2]string{"10m", "40Mi"}, [2]string{"10m", "40Mi"}),
	}
}

// LeastPrivilege makes o run the controller as an operator installs it: as the Helm chart's
// ServiceAccount with the chart's RBAC (and an audit log of its requests), and with the
// `joiner iam-policy` policy as its AWS identity's only policy. A world with its own
// controllerPolicy (a field case about that policy) keeps it.
func (p *Programs) LeastPrivilege(o localstack.Options) localstack.Options {
	o.Helm, o.ChartDir = p.Helm, p.Chart
	o.GeneratedPolicy = o.World == "" || !worldHasPolicy(o.World)
	return o
}

// worldHasPolicy reports whether the world file sets controllerPolicy; an unreadable one is
// left for localstack.Start to refuse.
func worldHasPolicy(path string) bool {
	raw, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var w struct {
		ControllerPolicy any `json:"controllerPolicy"`
	}
	return yaml.Unmarshal(raw, &w) == nil && w.ControllerPolicy != nil
}

// CheckLeastPrivilege fails the test when the run proves a permission missing or unused: the API
// server refused a request of the chart's ServiceAccount, the emulator denied a call of the
// controller, a grant of the chart's RBAC was never exercised, or an action of the generated IAM
// policy was never allowed; exceptions aside (chartrbac.UnusedExceptions and
// iampolicy.UnusedExceptions, both listed with their reasons in charts/joiner/README.md).
func CheckLeastPrivilege(t *testing.T, ctx context.Context, stack *localstack.Stack) {
	t.Helper()
	CheckPrivileges(t, ctx, stack, true)
}

// CheckPrivileges fails the test when the API server refused a request of the chart's
// ServiceAccount or the emulator denied a call of the controller, and with unused, when a grant
// or an action was never used (CheckLeastPrivilege).
func CheckPrivileges(t *testing.T, ctx context.Context, stack *localstack.Stack, unused bool) {
	t.Helper()
	checkPrivileges(t, ctx, stack, unused, privilegeChecks{refusals: true})
}

// checkPrivileges is CheckPrivileges; without refusals the API server's refusals are not checked.
func checkPrivileges(t *testing.T, ctx context.Context, stack *localstack.Stack, unused bool, checks privilegeChecks) {
	t.Helper()
	grants, err := chartrbac.Grants(stack.Chart)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Open(stack.AuditLogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }()
	unusedGrants, forbidden, err := chartrbac.Unused(log, stack.ServiceAccountUser, grants)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forbidden {
		if !checks.refusals {
			break
		}
		t.Errorf("the API server refused the chart's ServiceAccount: %s (add the rule to charts/joiner)", f)
	}
	decisions, err := stack.Authorizations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unusedActions, denied := iampolicy.Coverage(*stack.ControllerPolicy, decisions, iampolicy.UnusedExceptions)
	for _, d := range denied {
		if slices.Contains(checks.expectedDenials, d.Action+" "+d.Resource) {
			continue
		}
		t.Errorf("the generated IAM policy denied the controller %s on %s (add it to pkg/aws/iampolicy)", d.Action, d.Resource)
	}
	if !unused {
		return
	}
	var excepted []string
	for _, g := range unusedGrants {
		if _, ok := chartrbac.UnusedExceptions[g.String()]; ok {
			excepted = append(excepted, g.String())
		} else {
			t.Errorf("the chart grants %q, which the run never used: remove it, or list it with its reason in chartrbac.UnusedExceptions and charts/joiner/README.md", g)
		}
	}
	allUnused, _ := iampolicy.Coverage(*stack.ControllerPolicy, decisions, nil)
	for _, a := range unusedActions {
		t.Errorf("the generated IAM policy grants %s, which the run never used: remove it, or list it with its reason in iampolicy.UnusedExceptions and charts/joiner/README.md", a)
	}
	t.Logf("least privilege: %d grants of the chart, unused as excepted %q; %d IAM decisions over the policy's %d actions, unused as excepted %q",
		len(grants), excepted, len(decisions), len(stack.ControllerPolicy.Actions()), slices.DeleteFunc(allUnused, func(a string) bool { return slices.Contains(unusedActions, a) }))
}

// keepLogs copies a failed test's logs under $JOINER_E2E_LOGS/<test>, when set: the work
// directory goes with the test, and the tails DumpLogs prints rarely hold the cause.
func keepLogs(t *testing.T, dir string) {
	root := os.Getenv("JOINER_E2E_LOGS")
	if root == "" {
		return
	}
	dst := filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Logf("keeping the logs in %s: %v", dst, err)
		return
	}
	t.Logf("logs kept in %s", dst)
}

// DumpLogs prints the tail of each program's log, for a failed test.
func DumpLogs(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		lines := strings.Split(string(raw), "\n")
		lines = lines[max(0, len(lines)-40):]
		t.Logf("---- tail of %s\n%s", e.Name(), strings.Join(lines, "\n"))
	}
}

// Eventually polls cond every 500ms until it returns true, failing the test with what cond last
// said when timeout passes.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		done, state, err := cond(ctx)
		switch {
		case err == nil:
			last = state
		case ctx.Err() == nil:
			last = err.Error() // the API server may be busy; try again
		}
		return err == nil && done, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s (%v); last seen: %s", what, timeout, err, last)
	}
}

// NodePool is an on-demand NodePool of the sample EC2NodeClass. On-demand prices are the same in
// every zone, so a plan's cost can be compared with what was launched to the cent.
func NodePool(name string, weight int32, cpuLimit string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodePool {
	np := &v1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	np.Spec.Weight = &weight
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = append([]v1.NodeSelectorRequirementWithMinValues{
		{Key: v1.CapacityTypeLabelKey, Operator: v1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}},
		{Key: corev1.LabelOSStable, Operator: v1.NodeSelectorOpIn, Values: []string{"linux"}},
	}, reqs...)
	if cpuLimit != "" {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse(cpuLimit)}
	}
	// Consolidation is not under test: keep launched nodes while the test inspects them.
	np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
	np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("Never")
	return np
}

// Deployment runs replicas pause pods asking for cpu and memory.
func Deployment(namespace, name string, replicas int32, cpu, memory string, mutate ...func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: new(int64(5)),
					Containers: []corev1.Container{{
						Name: "pause", Image: "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
						}},
					}},
				},
			},
		},
	}
	for _, m := range mutate {
		m(&d.Spec.Template.Spec)
	}
	return d
}

// PodCounts counts the namespace's pods: all of them, Running ones, and those the scheduler has
// found no node for.
func PodCounts(ctx context.Context, c client.Client, namespace string) (total, running, unschedulable int, err error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return 0, 0, 0, err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				unschedulable++
			}
		}
	}
	return total, running, unschedulable, nil
}

// LiveInstances are the emulator's pending and running instances.
func LiveInstances(ctx context.Context, stack *localstack.Stack) ([]localstack.Instance, error) {
	all, err := stack.Instances(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(i localstack.Instance) bool { return !i.Live() }), nil
}

// CheckOneInstancePerNodeClaim fails the test unless live instances and NodeClaims pair one to
// one: no instance that no NodeClaim names (leaked), no NodeClaim sharing an instance or naming
// one that is gone, and no two instances tagged for one NodeClaim (launched twice). A launch in
// flight (a NodeClaim without its instance yet, or an instance its NodeClaim does not name yet)
// breaks the pairing for a moment, so the check is repeated for up to pairingSettle and fails
// only on what is still broken then; a leak or a double launch does not mend itself. It returns
// the NodeClaims and live instances of the last check.
func CheckOneInstancePerNodeClaim(t *testing.T, ctx context.Context, stack *localstack.Stack) ([]v1.NodeClaim, []localstack.Instance) {
	t.Helper()
	deadline := time.Now().Add(pairingSettle)
	for {
		claims, instances, problems := pairing(ctx, t, stack)
		if len(problems) == 0 || time.Now().After(deadline) {
			for _, p := range problems {
				t.Error(p)
			}
			return claims, instances
		}
		select {
		case <-ctx.Done():
			t.Fatalf("checking one instance per nodeclaim: %v (still broken: %v)", ctx.Err(), problems)
		case <-time.After(2 * time.Second):
		}
	}
}

// pairingSettle bounds how long CheckOneInstancePerNodeClaim waits for launches in flight: a
// launch refused for capacity in every offering takes a few seconds of retries.
const pairingSettle = 90 * time.Second

// pairing lists NodeClaims and live instances and says how they fail to pair one to one.
func pairing(ctx context.Context, t *testing.T, stack *localstack.Stack) ([]v1.NodeClaim, []localstack.Instance, []string) {
	t.Helper()
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	instances, err := LiveInstances(ctx, stack)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	byID := map[string]localstack.Instance{}
	taggedFor := map[string][]string{}
	for _, i := range instances {
		byID[i.ID] = i
		name := i.Tags[awsv1.TagKeyNodeClaim]
		taggedFor[name] = append(taggedFor[name], i.ID)
	}
	named := map[string]string{}
	for _, nc := range claims.Items {
		id := nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
		if other, ok := named[id]; ok {
			problems = append(problems, fmt.Sprintf("nodeclaims %s and %s both name instance %q", other, nc.Name, id))
		}
		named[id] = nc.Name
		if _, ok := byID[id]; !ok {
			problems = append(problems, fmt.Sprintf("nodeclaim %s names instance %q, which is not live", nc.Name, id))
		}
		if ids := taggedFor[nc.Name]; len(ids) > 1 {
			problems = append(problems, fmt.Sprintf("nodeclaim %s was launched %d times: %v", nc.Name, len(ids), ids))
		}
	}
	for _, i := range instances {
		if _, ok := named[i.ID]; !ok {
			problems = append(problems, fmt.Sprintf("instance %s (%s, tagged for nodeclaim %q) is leaked: no NodeClaim names it", i.ID, i.InstanceType, i.Tags[awsv1.TagKeyNodeClaim]))
		}
	}
	return claims.Items, instances, problems
}

// AllInitialized reports whether every NodeClaim is Initialized with its Node.
func AllInitialized(ctx context.Context, c client.Client) (bool, string, error) {
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		return false, "", err
	}
	for _, nc := range claims.Items {
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized) || nc.Status.NodeName == "" {
			return false, fmt.Sprintf("nodeclaim %s not initialized: %v", nc.Name, nc.Status.Conditions), nil
		}
	}
	return true, "", nil
}

// Simulation is what `joiner simulate -o json` reports.
type Simulation struct {
	PodsScheduled    int     `json:"podsScheduled"`
	PodsFailed       int     `json:"podsFailed"`
	Nodes            int     `json:"nodes"`
	TotalHourlyPrice float64 `json:"totalHourlyPrice"`
}

// DaemonSetsRunning reports whether every Node runs a Running pod of each of EKSDaemonSets.
func DaemonSetsRunning(ctx context.Context, c client.Client) (bool, string, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return false, "", err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		return false, "", err
	}
	running := map[string]int{}
	for _, p := range pods.Items {
		if p.Labels["k8s-app"] != "" && p.Status.Phase == corev1.PodRunning {
			running[p.Spec.NodeName]++
		}
	}
	want := len(EKSDaemonSets())
	for _, n := range nodes.Items {
		if running[n.Name] < want {
			return false, fmt.Sprintf("node %s runs %d of the %d DaemonSets", n.Name, running[n.Name], want), nil
		}
	}
	return len(nodes.Items) > 0, "no node", nil
}

// Simulate runs `joiner simulate` on the manifests, with the stack's DaemonSets, and the
// instance types the AWS provider offers the NodePools through the emulator: the same input the
// controller had.
func Simulate(t *testing.T, ctx context.Context, p *Programs, stack *localstack.Stack, objects ...client.Object) Simulation {
	t.Helper()
	return SimulateWithout(t, ctx, p, stack, nil, objects...)
}

// SimulateWithout is Simulate with the instance types in unavailable left out of the catalogue:
// those whose every pool the emulator refuses for insufficient capacity, which the controller
// cannot launch either.
func SimulateWithout(t *testing.T, ctx context.Context, p *Programs, stack *localstack.Stack, unavailable map[string]bool, objects ...client.Object) Simulation {
	t.Helper()
	dir := t.TempDir()
	var manifests [][]byte
	var pools []*v1.NodePool
	for _, obj := range append(slices.Clone(objects), EKSDaemonSets()...) {
		// Create drops a typed object's apiVersion and kind; the manifests need them back.
		obj = obj.DeepCopyObject().(client.Object)
		gvk, err := apiutil.GVKForObject(obj, stack.Client.Scheme())
		if err != nil {
			t.Fatal(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		raw, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, raw)
		if np, ok := obj.(*v1.NodePool); ok {
			pools = append(pools, np)
		}
	}
	catalogue, err := CatalogueOf(ctx, stack, pools)
	if err != nil {
		t.Fatal(err)
	}
	catalogue.InstanceTypes = slices.DeleteFunc(catalogue.InstanceTypes, func(it workload.InstanceType) bool { return unavailable[it.Name] })
	raw, err := json.Marshal(catalogue)
	if err != nil {
		t.Fatal(err)
	}
	manifestPath, cataloguePath := filepath.Join(dir, "manifests.yaml"), filepath.Join(dir, "instance-types.json")
	if err := os.WriteFile(manifestPath, bytes.Join(manifests, []byte("---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cataloguePath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, p.Joiner, "simulate", "-f", manifestPath, "--instance-types", cataloguePath, "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("joiner simulate: %v\n%s", err, out)
	}
	var sim Simulation
	if err := json.Unmarshal(out, &sim); err != nil {
		t.Fatalf("decoding joiner simulate's output: %v\n%s", err, out)
	}
	return sim
}

// CatalogueOf writes, in the shared/bench schema joiner simulate reads, the instance types the
// AWS provider offers the NodePools, read through the real SDK from the emulator.
func CatalogueOf(ctx context.Context, stack *localstack.Stack, pools []*v1.NodePool) (*workload.File, error) {
	// The chaos suite's emulator throttles a share of all requests, these reads too: a few
	// more attempts than the controller's keep the test's expectation from failing on a fault
	// injected for the controller (3 attempts failed one CI run at 57 throttles in 274 requests).
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{
		Region: localstack.DefaultRegion, Endpoint: stack.EmulatorURL,
		Credentials: credentials.NewStaticCredentialsProvider(localstack.ControllerAccessKey, "local-stack", ""),
		MaxAttempts: 10,
	})
	if err != nil {
		return nil, err
	}
	aws := provider.Build(stack.Client, sdk.NewClients(cfg), provider.Options{
		Cluster: userdata.Cluster{Name: localstack.DefaultClusterName}, Region: localstack.DefaultRegion, KubernetesVersion: "1.33",
	}, clock.RealClock{})
	file := &workload.File{Description: "instance types the AWS provider offers, from the emulator"}
	seen := map[string]bool{}
	for _, np := range pools {
		types, err := aws.CloudProvider.GetInstanceTypes(ctx, np)
		if err != nil {
			return nil, fmt.Errorf("listing instance types of nodepool %s, %w", np.Name, err)
		}
		for _, it := range types {
			if seen[it.Name] {
				continue
			}
			seen[it.Name] = true
			capacity, alloc := it.Capacity, it.Allocatable()
			entry := workload.InstanceType{
				Name: it.Name, OS: []string{"linux"}, Labels: map[string]string{},
				CPU:       float64(capacity.Cpu().MilliValue()) / 1000,
				MemoryMiB: capacity.Memory().Value() >> 20,
				Pods:      capacity.Pods().Value(),
			}
			entry.Overhead.CPUMilli = capacity.Cpu().MilliValue() - alloc.Cpu().MilliValue()
			entry.Overhead.MemoryMiB = entry.MemoryMiB - alloc.Memory().Value()>>20
			for key, values := range it.Requirements {
				switch {
				case key == corev1.LabelArchStable:
					entry.Arch = values[0]
				case key == corev1.LabelTopologyZone, key == v1.CapacityTypeLabelKey, key == corev1.LabelInstanceTypeStable, key == corev1.LabelOSStable:
				case len(values) == 1:
					entry.Labels[key] = values[0]
				}
			}
			// On-demand prices are the same in every zone; spot prices differ by zone, and the
			// schema holds one per type: the lowest, which is all the plan of an on-demand
			// NodePool can see of them (the order of types by their cheapest offering).
			entry.Price = math.Inf(1)
			spot := math.Inf(1)
			for _, o := range it.Offerings {
				if !o.Available {
					continue
				}
				if !slices.Contains(entry.Zones, o.Zone) {
					entry.Zones = append(entry.Zones, o.Zone)
				}
				if !slices.Contains(entry.CapacityTypes, o.CapacityType) {
					entry.CapacityTypes = append(entry.CapacityTypes, o.CapacityType)
				}
				switch o.CapacityType {
				case v1.CapacityTypeOnDemand:
					entry.Price = min(entry.Price, o.Price)
				case v1.CapacityTypeSpot:
					spot = min(spot, o.Price)
				}
			}
			if math.IsInf(entry.Price, 1) {
				continue // the NodePools here are on-demand only
			}
			if !math.IsInf(spot, 1) {
				entry.SpotPrice = &spot
			}
			file.InstanceTypes = append(file.InstanceTypes, entry)
		}
	}
	return file, nil
}

// Cost sums the hourly prices of the live instances.
func Cost(instances []localstack.Instance) float64 {
	var sum float64
	for _, i := range instances {
		sum += i.PricePerHour
	}
	return sum
}

// Namespace creates a namespace for the test's workload.
func Namespace(t *testing.T, ctx context.Context, stack *localstack.Stack, name string) {
	t.Helper()
	if err := stack.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}
