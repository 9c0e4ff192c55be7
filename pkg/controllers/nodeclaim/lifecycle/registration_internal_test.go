package lifecycle

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestRegistrationPatch applies the registration patch, made from the Node as read, to the Node
// as another writer left it meanwhile, with the JSON patch library kube-apiserver applies
// patches with: what others changed is kept, and a patch that would remove a taint other than
// the unregistered one fails instead.
func TestRegistrationPatch(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	dedicated := corev1.Taint{Key: "example.com/dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	agent := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	other := corev1.Taint{Key: "example.com/other", Effect: corev1.TaintEffectNoSchedule}
	nodeClaim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "nc", UID: "nc-uid", Labels: map[string]string{"example.com/team": "a", v1.NodePoolLabelKey: "default"},
			Annotations: map[string]string{"example.com/owner": "b", v1.NodeClaimTerminationTimestampAnnotationKey: "2026-01-01T00:00:00Z"}},
		Spec: v1.NodeClaimSpec{Taints: []corev1.Taint{dedicated}, StartupTaints: []corev1.Taint{agent}},
	}
	read := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "node", Labels: map[string]string{corev1.LabelHostname: "node"},
				Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{v1.UnregisteredNoExecuteTaint(), notReady}},
		}
	}
	wantLabels := map[string]string{corev1.LabelHostname: "node", "example.com/team": "a", v1.NodePoolLabelKey: "default", v1.NodeRegisteredLabelKey: "true"}
	for _, tc := range []struct {
		name string
		// meanwhile is what another writer did after the Node was read.
		meanwhile    func(n *corev1.Node)
		wantTaints   []corev1.Taint
		wantLabels   map[string]string
		wantFinalize []string
		wantFail     bool
	}{
		{name: "unchanged", wantTaints: []corev1.Taint{notReady, dedicated, agent}, wantLabels: wantLabels, wantFinalize: []string{v1.TerminationFinalizer}},
		{
			name:       "not-ready lifted and a label added meanwhile",
			meanwhile:  func(n *corev1.Node) { n.Spec.Taints = n.Spec.Taints[:1]; n.Labels["example.com/zone"] = "z" },
			wantTaints: []corev1.Taint{dedicated, agent}, wantLabels: with(wantLabels, "example.com/zone", "z"),
			wantFinalize: []string{v1.TerminationFinalizer},
		},
		{name: "a finalizer added to a Node read without any", meanwhile: func(n *corev1.Node) { n.Finalizers = []string{"example.com/keep"} }, wantFail: true},
		{name: "the unregistered taint moved", meanwhile: func(n *corev1.Node) { n.Spec.Taints = append([]corev1.Taint{other}, n.Spec.Taints...) }, wantFail: true},
		{name: "the unregistered taint gone", meanwhile: func(n *corev1.Node) { n.Spec.Taints = n.Spec.Taints[1:] }, wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := registrationPatch(nodeClaim, read())
			if err != nil {
				t.Fatal(err)
			}
			now := read()
			if tc.meanwhile != nil {
				tc.meanwhile(now)
			}
			doc, err := json.Marshal(now)
			if err != nil {
				t.Fatal(err)
			}
			ops, err := jsonpatch.DecodePatch(patch)
			if err != nil {
				t.Fatalf("decoding %s: %v", patch, err)
			}
			out, err := ops.Apply(doc)
			if tc.wantFail {
				if err == nil {
					t.Fatalf("patch %s applied, want it to fail", patch)
				}
				return
			}
			if err != nil {
				t.Fatalf("applying %s: %v", patch, err)
			}
			got := &corev1.Node{}
			if err := json.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantTaints, got.Spec.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if got.Annotations["example.com/owner"] != "b" || got.Annotations["node.alpha.kubernetes.io/ttl"] != "0" || got.Annotations[v1.NodeClaimTerminationTimestampAnnotationKey] != "" {
				t.Errorf("annotations %v, want the NodeClaim's but its termination timestamp, and the Node's own", got.Annotations)
			}
			if diff := cmp.Diff(tc.wantFinalize, got.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if !slices.ContainsFunc(got.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == "nc-uid" && o.Kind == "NodeClaim" }) {
				t.Errorf("owner references %v, want the NodeClaim", got.OwnerReferences)
			}
		})
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		out[mk] = mv
	}
	return out
}
