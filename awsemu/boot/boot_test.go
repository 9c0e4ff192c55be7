package boot

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

var launchTime = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// setAWSAuth writes kube-system/aws-auth with mapRoles; empty deletes it.
func setAWSAuth(t *testing.T, mapRoles string) {
	t.Helper()
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "aws-auth"}}
	if err := apiClient().Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("deleting aws-auth: %v", err)
	}
	if mapRoles == "" {
		return
	}
	cm.Data = map[string]string{"mapRoles": mapRoles}
	if err := apiClient().Create(ctx, cm); err != nil {
		t.Fatalf("creating aws-auth: %v", err)
	}
}

// bootInstance boots a fresh instance (unique name per test) with userData.
func bootInstance(t *testing.T, family, userData string, cluster Cluster) (Outcome, *clocktesting.FakeClock, string) {
	t.Helper()
	in := testInstance(family, userData)
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	sum := h.Sum32()
	in.ID = fmt.Sprintf("i-%017x", sum)
	in.PrivateIP = fmt.Sprintf("10.0.%d.%d", sum>>8&0xff, sum&0xff)
	in.PrivateDNSName = fmt.Sprintf("ip-10-0-%d-%d.us-west-2.compute.internal", sum>>8&0xff, sum&0xff)
	in.LaunchTime = launchTime
	clk := clocktesting.NewFakeClock(launchTime.Add(42 * time.Second))
	b := NewBooter(clk, NewRegistrar(apiClient(), clk))
	return b.Boot(t.Context(), Input{Instance: in, Cluster: cluster}), clk, in.PrivateDNSName
}

func getNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	err := apiClient().Get(ctx, client.ObjectKey{Name: name}, n)
	return n, err
}

func requireNoNode(t *testing.T, name string) {
	t.Helper()
	if _, err := getNode(t.Context(), name); !apierrors.IsNotFound(err) {
		t.Errorf("node %s: err = %v, want NotFound", name, err)
	}
}

func consoleHas(t *testing.T, out Outcome, want string) {
	t.Helper()
	if !strings.Contains(strings.Join(out.Console, "\n"), want) {
		t.Errorf("console lacks %q:\n%s", want, strings.Join(out.Console, "\n"))
	}
}

const karpenterAL2Bootstrap = `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --use-max-pods false --kubelet-extra-args '--node-labels="nodegroup=karpenter,karpenter.sh/nodepool=default" --register-with-taints="karpenter.sh/unregistered:NoExecute" --max-pods=110'`

func nodeMapping() string {
	return mapRolesFor(nodeRole, NodeUsernameTemplate, BootstrappersGroup, NodesGroup)
}

func TestBootJoins(t *testing.T) {
	setAWSAuth(t, nodeMapping())
	out, _, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined\n%s", out.Reason, out.Message, strings.Join(out.Console, "\n"))
	}
	consoleHas(t, out, "Successfully registered node")
	if !strings.HasPrefix(out.Console[0], "[   42.000000] ") {
		t.Errorf("console line not stamped with the uptime: %q", out.Console[0])
	}
	node, err := getNode(t.Context(), name)
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	if node.Spec.ProviderID != "aws:///us-west-2a/"+out.Node.Spec.ProviderID[len("aws:///us-west-2a/"):] || !strings.HasPrefix(node.Spec.ProviderID, "aws:///us-west-2a/i-") {
		t.Errorf("providerID = %q", node.Spec.ProviderID)
	}
	if diff := cmp.Diff([]corev1.Taint{v1.UnregisteredNoExecuteTaint()}, registeredTaints(node)); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	for k, want := range map[string]string{
		corev1.LabelHostname: name, corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux",
		corev1.LabelInstanceTypeStable: "t3.medium", corev1.LabelTopologyZone: "us-west-2a",
		corev1.LabelTopologyRegion: "us-west-2", "nodegroup": "karpenter", v1.NodePoolLabelKey: "default",
	} {
		if node.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], want)
		}
	}
	if got := node.Status.Capacity[corev1.ResourcePods]; got.Cmp(resource.MustParse("110")) != 0 {
		t.Errorf("capacity pods = %s, want 110", got.String())
	}
	if got := node.Status.Allocatable[corev1.ResourceMemory]; got.Cmp(resource.MustParse("2531Mi")) != 0 {
		t.Errorf("allocatable memory = %s, want 2531Mi (4096Mi - 11Mi*110 - 255Mi - 100Mi)", got.String())
	}
	if !isReady(node) {
		t.Errorf("node not Ready: %+v", node.Status.Conditions)
	}
}

func TestBootJoinsWithAccessEntry(t *testing.T) {
	setAWSAuth(t, "")
	cl := testCluster()
	cl.AccessEntries = []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeEC2Linux}}
	out, _, name := bootInstance(t, "AL2023", mimeDoc(generatedNodeConfig), cl)
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	if _, err := getNode(t.Context(), name); err != nil {
		t.Errorf("getting node: %v", err)
	}
}

func TestBootNeverJoins(t *testing.T) {
	tests := []struct {
		name       string
		mapRoles   string
		family     string
		userData   string
		mutate     func(*Cluster)
		wantReason string
		wantRetry  bool
		wantLog    string
	}{
		{
			name:       "S1 unmapped role: aws-auth maps only the controller role",
			mapRoles:   mapRolesFor(controllerRole, "system:node:{{EC2PrivateDNSName}}", BootstrappersGroup, NodesGroup),
			family:     "AL2",
			userData:   al2Script(karpenterAL2Bootstrap),
			wantReason: ReasonUnauthorized, wantRetry: true, wantLog: `err="Unauthorized"`,
		},
		{
			name:       "no aws-auth and no access entries",
			family:     "AL2",
			userData:   al2Script(karpenterAL2Bootstrap),
			wantReason: ReasonUnauthorized, wantRetry: true, wantLog: "Unauthorized",
		},
		{
			name:       "malformed bootstrap arguments: unterminated quote",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute`),
			wantReason: ReasonBootstrapFailed, wantLog: "unexpected EOF while looking for matching",
		},
		{
			name:       "malformed bootstrap arguments: option without value",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args`),
			wantReason: ReasonBootstrapFailed, wantLog: "$2: unbound variable",
		},
		{
			name:       "malformed kubelet arguments: invalid taint",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecut'`),
			wantReason: ReasonKubeletFailed, wantLog: "status=1/FAILURE",
		},
		{
			name:       "one-word option taken as the cluster name: token for another cluster",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh --kubelet-extra-args=--max-pods=20 demo --b64-cluster-ca $CA --apiserver-endpoint $URL`),
			wantReason: ReasonUnauthorized, wantLog: "Unauthorized",
		},
		{
			name:       "wrong CA",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL`),
			mutate:     func(c *Cluster) { c.CertificateAuthority = "b3RoZXIgY2E=" },
			wantReason: ReasonAPIServerUnreachable, wantLog: "x509: certificate signed by unknown authority",
		},
		{
			name:       "--hostname-override: NodeRestriction refuses a node named otherwise",
			mapRoles:   nodeMapping(),
			family:     "AL2",
			userData:   al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--hostname-override=build-node-1'`),
			wantReason: ReasonForbidden, wantRetry: true, wantLog: `is not allowed to modify node \"build-node-1\"`,
		},
		{
			name:       "mapped without system:nodes",
			mapRoles:   mapRolesFor(nodeRole, NodeUsernameTemplate, BootstrappersGroup),
			family:     "AL2",
			userData:   al2Script(karpenterAL2Bootstrap),
			wantReason: ReasonForbidden, wantRetry: true, wantLog: "cannot create resource",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setAWSAuth(t, tt.mapRoles)
			cl := testCluster()
			if tt.mutate != nil {
				tt.mutate(&cl)
			}
			out, _, name := bootInstance(t, tt.family, tt.userData, cl)
			if out.Joined || out.Reason != tt.wantReason || out.Retry != tt.wantRetry {
				t.Errorf("Boot() = joined %v reason %s retry %v (%s), want reason %s retry %v", out.Joined, out.Reason, out.Retry, out.Message, tt.wantReason, tt.wantRetry)
			}
			consoleHas(t, out, tt.wantLog)
			requireNoNode(t, name)
		})
	}
}

func TestBootRegistersWithoutRequiredTaint(t *testing.T) {
	tests := []struct {
		name      string
		family    string
		userData  string
		wantTaint []corev1.Taint
	}{
		{
			name:     "S2 one-word --kubelet-extra-args=",
			family:   "Custom",
			userData: al2Script(`/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`),
		},
		{
			name:   "S3 user flag replaces the generated taint",
			family: "AL2023",
			userData: mimeDoc(nodeConfigPart("  kubelet:\n    config:\n      clusterDNS: [172.20.0.10]\n    flags:\n    - --register-with-taints=node.cilium.io/agent-not-ready=true:NoExecute\n"),
				generatedNodeConfig),
			wantTaint: []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setAWSAuth(t, nodeMapping())
			out, _, name := bootInstance(t, tt.family, tt.userData, testCluster())
			if !out.Joined {
				t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
			}
			node, err := getNode(t.Context(), name)
			if err != nil {
				t.Fatalf("getting node: %v", err)
			}
			if hasTaint(node.Spec.Taints, v1.UnregisteredTaintKey, corev1.TaintEffectNoExecute) {
				t.Errorf("node registered with %s, want it lost", v1.UnregisteredTaintKey)
			}
			if diff := cmp.Diff(tt.wantTaint, registeredTaints(node)); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBootRetryJoinsOnceRoleIsMapped(t *testing.T) {
	setAWSAuth(t, mapRolesFor(controllerRole, NodeUsernameTemplate, NodesGroup))
	out, _, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if out.Joined || !out.Retry {
		t.Fatalf("first Boot() = joined %v retry %v, want a retryable refusal", out.Joined, out.Retry)
	}
	// A caller retrying shows Console[Attempt:]: the registration attempt, not the bootstrap.
	if out.Attempt == 0 || !strings.Contains(out.Console[out.Attempt-1], "Started kubelet.service") ||
		!strings.Contains(out.Console[out.Attempt], "Unable to register node") {
		t.Errorf("Attempt = %d does not start the registration lines:\n%s", out.Attempt, strings.Join(out.Console, "\n"))
	}
	setAWSAuth(t, nodeMapping())
	out, _, _ = bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("second Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	if _, err := getNode(t.Context(), name); err != nil {
		t.Errorf("getting node: %v", err)
	}
}

// watchCacheLagging is an API server whose watch cache has not caught up: a read from it
// (resourceVersion "0") finds nothing.
type watchCacheLagging struct{ client.Client }

func (c watchCacheLagging) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var o client.GetOptions
	o.ApplyOptions(opts)
	if o.Raw != nil && o.Raw.ResourceVersion == "0" {
		return apierrors.NewNotFound(corev1.Resource("nodes"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestHeartbeatOfANodeTheWatchCacheLacks: a Node registered a moment ago can be missing from the
// API server's watch cache, which Heartbeat reads; it is not taken for deleted (a kubelet that
// did would never beat it again) until etcd says so.
func TestHeartbeatOfANodeTheWatchCacheLacks(t *testing.T) {
	setAWSAuth(t, nodeMapping())
	out, clk, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	lagging := watchCacheLagging{apiClient()}
	r := NewRegistrar(lagging, clk)
	if posted, err := r.Heartbeat(t.Context(), name, true); err != nil || !posted {
		t.Fatalf("Heartbeat() of a node the watch cache lacks = %v, %v, want a status posted", posted, err)
	}
	if err := apiClient().Delete(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Heartbeat(t.Context(), name, true); !errors.Is(err, ErrNodeGone) {
		t.Errorf("Heartbeat() after delete = %v, want ErrNodeGone", err)
	}
}

func TestRegistrarHeartbeat(t *testing.T) {
	setAWSAuth(t, nodeMapping())
	out, clk, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	r := NewRegistrar(apiClient(), clk)
	// Something marks the node NotReady; the next heartbeat makes it Ready again.
	node, err := getNode(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].Status = corev1.ConditionUnknown
		}
	}
	if err := apiClient().Status().Update(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	waitWatchCache(t, name, func(n *corev1.Node) bool { return !isReady(n) })
	clk.Step(time.Minute)
	if posted, err := r.Heartbeat(t.Context(), name, false); err != nil || !posted {
		t.Fatalf("Heartbeat() = %v, %v, want a status posted", posted, err)
	}
	node, err = getNode(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if !isReady(node) {
		t.Errorf("node not Ready after heartbeat: %+v", node.Status.Conditions)
	}
	for _, c := range node.Status.Conditions {
		if !c.LastHeartbeatTime.Time.Equal(clk.Now().Truncate(time.Second)) {
			t.Errorf("condition %s heartbeat = %v, want %v", c.Type, c.LastHeartbeatTime, clk.Now())
		}
	}
	waitWatchCache(t, name, isReady)
	// Nothing changed: the status is left alone unless a report is due.
	clk.Step(time.Minute)
	if posted, err := r.Heartbeat(t.Context(), name, false); err != nil || posted {
		t.Errorf("Heartbeat() of a Ready node = %v, %v, want nothing posted", posted, err)
	}
	if posted, err := r.Heartbeat(t.Context(), name, true); err != nil || !posted {
		t.Errorf("Heartbeat(always) = %v, %v, want a status posted", posted, err)
	}
	if err := apiClient().Delete(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Heartbeat(t.Context(), name, true); !errors.Is(err, ErrNodeGone) {
		t.Errorf("Heartbeat() after delete = %v, want ErrNodeGone", err)
	}
}

// TestRegistrarRenewLease: the Lease is created owned by the Node, then renewed from the copy
// last written, as the kubelet renews it; a copy gone stale (another writer) or a Lease deleted
// is read again; a Node gone is ErrNodeGone.
func TestRegistrarRenewLease(t *testing.T) {
	setAWSAuth(t, nodeMapping())
	out, clk, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	r := NewRegistrar(apiClient(), clk)
	node, err := getNode(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: NodeLeaseNamespace, Name: name}
	deleteLease := func(t *testing.T) {
		if err := apiClient().Delete(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: NodeLeaseNamespace, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	var last *coordinationv1.Lease
	for _, step := range []struct {
		name   string
		before func(t *testing.T)
	}{
		{name: "created"},
		{name: "renewed"},
		{name: "renewed after another writer", before: func(t *testing.T) {
			stale := &coordinationv1.Lease{}
			if err := apiClient().Get(t.Context(), key, stale); err != nil {
				t.Fatal(err)
			}
			stale.Spec.HolderIdentity = ptr.To("someone-else")
			if err := apiClient().Update(t.Context(), stale); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "created again after a deletion", before: deleteLease},
	} {
		if step.before != nil {
			step.before(t)
		}
		if last, err = r.RenewLease(t.Context(), name, last); err != nil || last == nil {
			t.Fatalf("%s: RenewLease() = %v, %v", step.name, last, err)
		}
		checkLease(t, step.name, key, last, clk.Now(), node.UID)
		clk.Step(10 * time.Second)
	}
	if err := apiClient().Delete(t.Context(), node); err != nil {
		t.Fatal(err)
	}
	deleteLease(t)
	if got, err := r.RenewLease(t.Context(), name, last); !errors.Is(err, ErrNodeGone) || got != nil {
		t.Errorf("RenewLease() after delete = %v, %v, want nil and ErrNodeGone", got, err)
	}
}

// checkLease fails the test unless the stored Lease was renewed at now, is owned by the Node of
// uid, and is the one RenewLease returned (returned).
func checkLease(t *testing.T, step string, key types.NamespacedName, returned *coordinationv1.Lease, now time.Time, uid types.UID) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := apiClient().Get(t.Context(), key, lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.Time.Equal(now.Truncate(time.Microsecond)) ||
		len(lease.OwnerReferences) != 1 || lease.OwnerReferences[0].UID != uid {
		t.Errorf("%s: lease renewed at %v owned by %v, want %v and node %s", step, lease.Spec.RenewTime, lease.OwnerReferences, now, uid)
	}
	if lease.ResourceVersion != returned.ResourceVersion {
		t.Errorf("%s: RenewLease returned resourceVersion %s, the stored lease has %s", step, returned.ResourceVersion, lease.ResourceVersion)
	}
}

// waitWatchCache waits until the API server's watch cache, which Heartbeat reads, holds a version
// of the Node named name that ok accepts: a write is there a moment after it returns.
func waitWatchCache(t *testing.T, name string, ok func(*corev1.Node) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		node := &corev1.Node{}
		err := apiClient().Get(t.Context(), client.ObjectKey{Name: name}, node, fromWatchCache())
		if err == nil && ok(node) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch cache never showed node %s as wanted (last read: %v, %+v)", name, err, node.Status.Conditions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// registeredTaints are the node's taints without node.kubernetes.io/not-ready, which the API
// server's TaintNodesByCondition admission adds to every new Node (and kube-controller-manager,
// not running here, removes once the node is Ready).
func registeredTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			out = append(out, t)
		}
	}
	return out
}

func TestRegistrarRunPods(t *testing.T) {
	setAWSAuth(t, nodeMapping())
	out, clk, name := bootInstance(t, "AL2", al2Script(karpenterAL2Bootstrap), testCluster())
	if !out.Joined {
		t.Fatalf("Boot() = %s: %s, want joined", out.Reason, out.Message)
	}
	ctx := t.Context()
	bound := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "inflate-bound"},
		Spec:       corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	elsewhere := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "inflate-elsewhere"},
		Spec:       corev1.PodSpec{NodeName: "other-node", Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	for _, p := range []*corev1.Pod{bound, elsewhere} {
		if err := apiClient().Create(ctx, p); err != nil {
			t.Fatalf("creating pod: %v", err)
		}
	}
	r := NewRegistrar(apiClient(), clk)
	n, err := r.RunPods(ctx, name, "10.0.1.23")
	if err != nil || n != 1 {
		t.Fatalf("RunPods() = %d, %v, want 1 pod", n, err)
	}
	if n, err := r.RunPods(ctx, name, "10.0.1.23"); err != nil || n != 0 {
		t.Errorf("second RunPods() = %d, %v, want nothing to do", n, err)
	}
	if err := apiClient().Get(ctx, client.ObjectKeyFromObject(bound), bound); err != nil {
		t.Fatal(err)
	}
	if bound.Status.Phase != corev1.PodRunning || bound.Status.PodIP == "" || len(bound.Status.ContainerStatuses) != 1 || !bound.Status.ContainerStatuses[0].Ready {
		t.Errorf("bound pod status = %+v, want Running with an IP and a ready container", bound.Status)
	}
	if err := apiClient().Get(ctx, client.ObjectKeyFromObject(elsewhere), elsewhere); err != nil {
		t.Fatal(err)
	}
	if elsewhere.Status.Phase == corev1.PodRunning {
		t.Errorf("pod on another node was run")
	}
	checkTerminatingPodDeleted(t, r, name, bound)
}

// checkTerminatingPodDeleted: a graceful delete (an eviction, say) leaves the bound pod
// terminating until its kubelet has stopped it and deletes it for good.
func checkTerminatingPodDeleted(t *testing.T, r *Registrar, name string, bound *corev1.Pod) {
	t.Helper()
	ctx := t.Context()
	if err := apiClient().Delete(ctx, bound, client.GracePeriodSeconds(30)); err != nil {
		t.Fatal(err)
	}
	if err := apiClient().Get(ctx, client.ObjectKeyFromObject(bound), bound); err != nil || bound.DeletionTimestamp == nil {
		t.Fatalf("bound pod after a graceful delete: %v, deletionTimestamp %v; want it terminating", err, bound.DeletionTimestamp)
	}
	if n, err := r.RunPods(ctx, name, "10.0.1.23"); err != nil || n != 1 {
		t.Errorf("RunPods() of a terminating pod = %d, %v, want 1", n, err)
	}
	if err := apiClient().Get(ctx, client.ObjectKeyFromObject(bound), bound); !apierrors.IsNotFound(err) {
		t.Errorf("terminating pod after RunPods: %v, want it gone", err)
	}
}
