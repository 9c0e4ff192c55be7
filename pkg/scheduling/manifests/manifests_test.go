package manifests

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/pkg/manifest"
)

func TestInput(t *testing.T) {
	objs, err := manifest.Decode(strings.NewReader(`apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 2
  template: {spec: {containers: [{name: c, image: x}], restartPolicy: Never}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: c, image: x}]}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {karpenter.sh/nodepool: default}}
spec:
  taints: [{key: karpenter.sh/unregistered, effect: NoExecute}, {key: gpu, effect: NoSchedule}, {key: node.cilium.io/agent-not-ready, value: "true", effect: NoExecute}]
status: {allocatable: {cpu: "2"}, capacity: {cpu: "2"}}
---
apiVersion: v1
kind: Pod
metadata: {name: bound}
spec: {nodeName: n1, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec: {containers: [{name: c, image: x}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Input(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pending []string
	for _, p := range in.Pods {
		pending = append(pending, p.Namespace+"/"+p.Name)
	}
	if diff := cmp.Diff([]string{"default/batch-0", "default/batch-1", "default/pending"}, pending); diff != "" {
		t.Errorf("pending pods (-want +got):\n%s", diff)
	}
	if len(in.DaemonSetPods) != 1 || in.DaemonSetPods[0].Namespace != "kube-system" {
		t.Errorf("daemonset pods %v", in.DaemonSetPods)
	}
	if len(in.Nodes) != 1 || in.Nodes[0].NodePool != "default" || len(in.Nodes[0].Pods) != 1 || len(in.Nodes[0].Taints) != 1 {
		t.Errorf("node %+v: want NodePool default, the bound pod, and only the gpu taint", in.Nodes[0])
	}
	bad, _ := manifest.Decode(strings.NewReader("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: s}\n"))
	if _, err := Input(bad, nil); err == nil || !strings.Contains(err.Error(), "kind Widget is not one simulate reads") {
		t.Errorf("an unknown kind should be refused, got %v", err)
	}
	// A Deployment typed as a Service (a typo in kind) is refused too, a ConfigMap skipped.
	typo, _ := manifest.Decode(strings.NewReader("apiVersion: apps/v1\nkind: Service\nmetadata: {name: s}\n"))
	if _, err := Input(typo, nil); err == nil {
		t.Errorf("kind Service in apps/v1 should be refused")
	}
	inert, _ := manifest.Decode(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aws-auth}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n"))
	if in, err := Input(inert, nil); err != nil || len(in.Pods) != 0 {
		t.Errorf("a ConfigMap and a Service make no pods: %v, %v", in, err)
	}
}
