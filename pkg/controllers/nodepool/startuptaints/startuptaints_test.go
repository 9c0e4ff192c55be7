package startuptaints_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/internal/testenv"
	"github.com/joinerhq/joiner/internal/testkit"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/nodepool/startuptaints"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env))
}

func nodePool(name string, taints, startup []corev1.Taint) *v1.NodePool {
	np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Taints, np.Spec.Template.Spec.StartupTaints = taints, startup
	return np
}

func node(name, pool string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool}}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestAdvice(t *testing.T) {
	ctx := t.Context()
	rec := &testenv.Recorder{}
	c := startuptaints.NewController(env.Client, rec)
	if err := env.StartManager(ctx, func(ctx context.Context, mgr manager.Manager) error { return c.Register(ctx, mgr) }); err != nil {
		t.Fatal(err)
	}
	cilium := corev1.Taint{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}
	ebs := corev1.Taint{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute}
	own := corev1.Taint{Key: "dedicated", Value: "ci", Effect: corev1.TaintEffectNoSchedule}
	for _, o := range []client.Object{
		nodePool("in-taints", []corev1.Taint{own, cilium}, nil),
		nodePool("on-node", nil, nil),
		nodePool("declared", nil, []corev1.Taint{cilium}),
		node("on-node-1", "on-node", ebs, own),
		node("declared-1", "declared", cilium),
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		if rec.Find("in-taints", corev1.EventTypeWarning, startuptaints.ReasonAgentTaintNotDeclared) == "" ||
			rec.Find("on-node", corev1.EventTypeWarning, startuptaints.ReasonAgentTaintNotDeclared) == "" {
			return fmt.Sprintf("events so far: %v", rec.Events())
		}
		return ""
	})
	inTaints := rec.Find("in-taints", corev1.EventTypeWarning, startuptaints.ReasonAgentTaintNotDeclared)
	for _, want := range []string{"node.cilium.io/agent-not-ready=true:NoExecute", "Cilium", "in its spec.template.spec.taints"} {
		if !strings.Contains(inTaints, want) {
			t.Errorf("advice %q does not contain %q", inTaints, want)
		}
	}
	onNode := rec.Find("on-node", corev1.EventTypeWarning, startuptaints.ReasonAgentTaintNotDeclared)
	if !strings.Contains(onNode, "on node on-node-1") || strings.Contains(onNode, "dedicated") {
		t.Errorf("advice %q should name the node and the EBS taint only", onNode)
	}
	// The YAML of the advice, applied as the operator would, declares the taint.
	fragment := onNode[strings.Index(onNode, "spec:\n"):]
	var np v1.NodePool
	if err := yaml.UnmarshalStrict([]byte(fragment), &np); err != nil || len(np.Spec.Template.Spec.StartupTaints) != 1 || np.Spec.Template.Spec.StartupTaints[0] != ebs {
		t.Errorf("advice YAML %q declares %v (%v), want the EBS taint", fragment, np.Spec.Template.Spec.StartupTaints, err)
	}
	// Advice is given once per generation, however often the NodePool is reconciled; a declared
	// taint gets none. Reconcile is called directly so that the check does not depend on timing.
	for _, name := range []string{"on-node", "declared", "on-node"} {
		np := &v1.NodePool{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Reconcile(ctx, np); err != nil {
			t.Fatal(err)
		}
	}
	count := 0
	for _, e := range rec.Events() {
		if strings.HasPrefix(e, "declared ") {
			t.Errorf("a declared taint got advice: %s", e)
		}
		if strings.HasPrefix(e, "on-node ") {
			count++
		}
	}
	if count != 1 {
		t.Errorf("on-node advised %d times, want once: %v", count, rec.Events())
	}
}
