package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joinerhq/joiner/pkg/manifest"
)

// v115Manifests are an EC2NodeClass as Karpenter v1.15 documents them (spec.kubelet with fields
// beyond the ones Karpenter maps, instanceStorePolicy RAID0), a NodePool of the m5 and m5d
// families, and a pod asking for more ephemeral storage than the 20Gi root volume.
const v115Manifests = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: local-nvme
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  instanceStorePolicy: RAID0
  kubelet:
    maxPods: 42
    registryPullQPS: 10
    containerLogMaxSize: 50Mi
    shutdownGracePeriod: 45s
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: local-nvme
spec:
  template:
    spec:
      requirements:
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "m5d"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: local-nvme
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: scratch
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels:
      app: scratch
  template:
    metadata:
      labels:
        app: scratch
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: scratch
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
          resources:
            requests:
              cpu: 500m
              memory: 256Mi
              ephemeral-storage: 50Gi
`

// TestV115NodeClassInstanceStore applies the manifests on the S5 world (the demo account): the
// class validates with its open kubelet fields, the pod, which fits no root volume, gets an m5d
// instance whose RAID-0 instance store is the node's ephemeral storage, and the node joins.
func TestV115NodeClassInstanceStore(t *testing.T) {
	stack := startWorld(t, "s5-arm64-nodepool")
	objects, err := manifest.DecodeBytes([]byte(v115Manifests))
	if err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	for _, obj := range objects {
		if err := stack.Apply(context.WithoutCancel(t.Context()), obj); err != nil {
			t.Fatal(err)
		}
	}
	podsRunning(t, stack, runWithin, 1, "scratch")
	t.Logf("the pod ran %.1fs after the manifests were applied", time.Since(applied).Seconds())
	instances := checkEveryClaimJoined(t, stack)
	if len(instances) != 1 || !strings.HasPrefix(instances[0].InstanceType, "m5d.") {
		t.Fatalf("instances %+v, want one of the m5d family (instance store)", instances)
	}
	var nodes corev1.NodeList
	if err := stack.Client.List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	want := resource.MustParse("50Gi")
	checked := 0
	for _, n := range nodes.Items {
		if n.Labels["karpenter.sh/nodepool"] != "local-nvme" {
			continue
		}
		checked++
		if got := n.Status.Allocatable[corev1.ResourceEphemeralStorage]; got.Cmp(want) < 0 {
			t.Errorf("node %s has %s of allocatable ephemeral storage, want at least %s", n.Name, got.String(), want.String())
		}
	}
	if checked != 1 {
		t.Errorf("found %d nodes of NodePool local-nvme, want 1", checked)
	}
}
