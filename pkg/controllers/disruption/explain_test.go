package disruption_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cloudprovider/fake"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// TestExplain: a node that a do-not-disrupt pod keeps is explained with that reason, and the dry
// run still says where its pod would go and what removing it would save.
func TestExplain(t *testing.T) {
	cloud := &fake.CloudProvider{InstanceTypes: []*cloudprovider.InstanceType{instanceType("m7i.large", 0.10, v1.CapacityTypeOnDemand)}}
	newNodePool(t, "explain", underutilizedPool)
	_, node := newNode(t, "explain", "explain", onDemand)
	_, receiver := newNode(t, "explain", "explain-receiver", func(nc *v1.NodeClaim, n *corev1.Node) { onDemand(nc, n); doNotDisrupt(n) })
	ready(t, receiver)
	newPod(t, "explain-kept", node.Name, func(p *corev1.Pod) { requesting("500m", "explain")(p); doNotDisrupt(p) })

	got, err := disruption.Explain(t.Context(), env.Client, cloud, node.Name, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "kept" || !strings.Contains(got.Reason, "pod default/explain-kept has karpenter.sh/do-not-disrupt") {
		t.Errorf("state %q, reason %q; want kept by the do-not-disrupt pod", got.State, got.Reason)
	}
	if got.DryRun == nil || got.DryRun.Placements["default/explain-kept"] != receiver.Name {
		t.Fatalf("dry run %+v, want the pod placed on %s", got.DryRun, receiver.Name)
	}
	if got.DryRun.Savings == nil || *got.DryRun.Savings != 0.10 {
		t.Errorf("dry-run savings %v, want $0.10/h (the node's price)", got.DryRun.Savings)
	}
	var text bytes.Buffer
	if err := got.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"State:      kept", "default/explain-kept -> " + receiver.Name, "Savings:  $0.1000/h"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	// With the controller's --node-cost, the node's price and the savings of removing it count it.
	withCost, err := disruption.Explain(t.Context(), env.Client, cloud, node.Name, time.Now(), disruption.WithNodeCost(0.02))
	if err != nil {
		t.Fatal(err)
	}
	if withCost.Price == nil || math.Abs(*withCost.Price-0.12) > 1e-9 {
		t.Errorf("price %v with a $0.02 node cost, want $0.12/h", withCost.Price)
	}
	if withCost.DryRun == nil || withCost.DryRun.Savings == nil || math.Abs(*withCost.DryRun.Savings-0.12) > 1e-9 {
		t.Errorf("dry run %+v with a $0.02 node cost, want savings of $0.12/h", withCost.DryRun)
	}
}
