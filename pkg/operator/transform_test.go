package operator

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestStripUnread: the cache keeps what the controllers read of Pods and Nodes (scheduling
// input, ownership, the do-not-disrupt annotation, phase and conditions, capacity and taints)
// and drops the rest; ReplicaSets, StatefulSets and ReplicationControllers lose their templates
// (default spreads read their selectors); other objects lose only managedFields and the
// last-applied annotation.
func TestStripUnread(t *testing.T) {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "a", Namespace: "ns", Labels: map[string]string{"app": "a"},
			Annotations:     map[string]string{v1.DoNotDisruptAnnotationKey: "true", lastAppliedAnnotation: `{"big":"json"}`},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "a-1", Controller: ptr.To(true)}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		}
	}
	kept := func() metav1.ObjectMeta {
		m := meta()
		m.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		m.ManagedFields = nil
		return m
	}
	requests := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}
	fullContainer := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "app:1", Resources: requests, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			Ports:   []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}},
			Command: []string{"/app"}, Args: []string{"--serve"}, WorkingDir: "/",
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}}, EnvFrom: []corev1.EnvFromSource{{Prefix: "P"}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "token", MountPath: "/var/run"}},
			LivenessProbe:  &corev1.Probe{PeriodSeconds: 10},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 10}, StartupProbe: &corev1.Probe{PeriodSeconds: 10},
			Lifecycle:              &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent, SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)},
		}
	}
	keptContainer := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: "app:1", Resources: requests, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}},
		}
	}
	scheduling := func(spec corev1.PodSpec) corev1.PodSpec {
		spec.NodeName, spec.NodeSelector = "node-a", map[string]string{"zone": "a"}
		spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
		spec.PriorityClassName, spec.Priority = "high", ptr.To(int32(1000))
		spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
		spec.TerminationGracePeriodSeconds = ptr.To(int64(30))
		return spec
	}
	claim := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}
	token := corev1.Volume{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}
	conditions := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}

	for _, tc := range []struct {
		name    string
		in, out client.Object
	}{{
		name: "pod",
		in: &corev1.Pod{ObjectMeta: meta(), Spec: scheduling(corev1.PodSpec{
			Volumes:             []corev1.Volume{token, claim},
			InitContainers:      []corev1.Container{fullContainer("init")},
			Containers:          []corev1.Container{fullContainer("app")},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
		}), Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Conditions: conditions, StartTime: &metav1.Time{},
			PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, HostIP: "10.0.0.2", HostIPs: []corev1.HostIP{{IP: "10.0.0.2"}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", Ready: true}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init"}}, EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debug"}},
		}},
		out: &corev1.Pod{ObjectMeta: kept(), Spec: scheduling(corev1.PodSpec{
			Volumes:        []corev1.Volume{claim},
			InitContainers: []corev1.Container{keptContainer("init")},
			Containers:     []corev1.Container{keptContainer("app")},
		}), Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions, StartTime: &metav1.Time{}}},
	}, {
		name: "pod without claims",
		in:   &corev1.Pod{ObjectMeta: meta(), Spec: corev1.PodSpec{Volumes: []corev1.Volume{token}}},
		out:  &corev1.Pod{ObjectMeta: kept()},
	}, {
		name: "node",
		in: &corev1.Node{ObjectMeta: meta(), Spec: corev1.NodeSpec{ProviderID: "aws:///a/i-1", Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1900m")},
				Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}},
				Images:          []corev1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 1 << 20}},
				NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.33.0", OSImage: "Amazon Linux 2023"},
				DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
				RuntimeHandlers: []corev1.NodeRuntimeHandler{{Name: "runc"}},
				Features:        &corev1.NodeFeatures{SupplementalGroupsPolicy: ptr.To(true)},
				Config:          &corev1.NodeConfigStatus{},
			}},
		out: &corev1.Node{ObjectMeta: kept(), Spec: corev1.NodeSpec{ProviderID: "aws:///a/i-1", Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1900m")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}},
			}},
	}, {
		name: "controllers keep their selectors, not their templates",
		in: &appsv1.ReplicaSet{ObjectMeta: meta(), Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{fullContainer("c")}}}}},
		out: &appsv1.ReplicaSet{ObjectMeta: kept(), Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}},
	}, {
		name: "other objects keep their fields",
		in:   &v1.NodeClaim{ObjectMeta: meta(), Status: v1.NodeClaimStatus{ProviderID: "aws:///a/i-1", NodeName: "node-a"}},
		out:  &v1.NodeClaim{ObjectMeta: kept(), Status: v1.NodeClaimStatus{ProviderID: "aws:///a/i-1", NodeName: "node-a"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stripUnread()(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.out, got); diff != "" {
				t.Errorf("stripUnread() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStripUnreadSharesRepeatedStrings: strings that repeat across cached objects (namespace,
// labels, owners, node names, tolerations, resource names, instance types) are one copy,
// whichever object they were decoded with; the objects are otherwise unchanged.
func TestStripUnreadSharesRepeatedStrings(t *testing.T) {
	transform := stripUnread()
	// decoded is a fresh copy of s, as the decoder makes one for every object.
	decoded := strings.Clone
	newPod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: decoded("kube-system"), Labels: map[string]string{decoded("k8s-app"): decoded("aws-node")},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: decoded("apps/v1"), Kind: decoded("DaemonSet"), Name: decoded("aws-node"), UID: types.UID(decoded("uid-1"))}},
			},
			Spec: corev1.PodSpec{
				NodeName:    decoded("node-a"),
				Tolerations: []corev1.Toleration{{Key: decoded("node.kubernetes.io/not-ready"), Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: decoded("aws-node"), Image: decoded("amazon/aws-node:1"),
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceName(decoded("cpu")): resource.MustParse("25m")}}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodPhase(decoded("Running")), Conditions: []corev1.PodCondition{{Type: corev1.PodConditionType(decoded("Ready")), Status: corev1.ConditionStatus(decoded("True"))}}},
		}
	}
	newClaim := func(name string) *v1.NodeClaim {
		return &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{decoded(v1.NodePoolLabelKey): decoded("general")}},
			Spec: v1.NodeClaimSpec{Requirements: []v1.NodeSelectorRequirementWithMinValues{{
				Key: decoded(corev1.LabelInstanceTypeStable), Operator: v1.NodeSelectorOpIn, Values: []string{decoded("m5.large"), decoded("c5.large")},
			}}},
			Status: v1.NodeClaimStatus{Conditions: []metav1.Condition{{Type: decoded("Launched"), Status: metav1.ConditionStatus(decoded("True")), Reason: decoded("Launched")}}},
		}
	}
	run := func(obj client.Object) client.Object {
		t.Helper()
		before := obj.DeepCopyObject()
		out, err := transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, out); diff != "" {
			t.Errorf("interning changed %s (-before +after):\n%s", obj.GetName(), diff)
		}
		return out.(client.Object)
	}
	a, b := run(newPod("a")).(*corev1.Pod), run(newPod("b")).(*corev1.Pod)
	ca, cb := run(newClaim("a")).(*v1.NodeClaim), run(newClaim("b")).(*v1.NodeClaim)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	firstKey := func(m map[string]string) string {
		for k := range m {
			return k
		}
		return ""
	}
	firstResource := func(rl corev1.ResourceList) corev1.ResourceName {
		for k := range rl {
			return k
		}
		return ""
	}
	for what, ok := range map[string]bool{
		"namespace":         same(a.Namespace, b.Namespace),
		"label key":         same(firstKey(a.Labels), firstKey(b.Labels)),
		"label value":       same(a.Labels["k8s-app"], b.Labels["k8s-app"]),
		"owner UID":         same(string(a.OwnerReferences[0].UID), string(b.OwnerReferences[0].UID)),
		"node name":         same(a.Spec.NodeName, b.Spec.NodeName),
		"toleration key":    same(a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key),
		"image":             same(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image),
		"phase":             same(string(a.Status.Phase), string(b.Status.Phase)),
		"condition type":    same(string(a.Status.Conditions[0].Type), string(b.Status.Conditions[0].Type)),
		"instance type":     same(ca.Spec.Requirements[0].Values[0], cb.Spec.Requirements[0].Values[0]),
		"requirement key":   same(ca.Spec.Requirements[0].Key, cb.Spec.Requirements[0].Key),
		"claim condition":   same(ca.Status.Conditions[0].Reason, cb.Status.Conditions[0].Reason),
		"claim label value": same(ca.Labels[v1.NodePoolLabelKey], cb.Labels[v1.NodePoolLabelKey]),
		"resource name":     same(string(firstResource(a.Spec.Containers[0].Resources.Requests)), string(firstResource(b.Spec.Containers[0].Resources.Requests))),
	} {
		if !ok {
			t.Errorf("the two objects' %s are two copies, want one", what)
		}
	}
}
