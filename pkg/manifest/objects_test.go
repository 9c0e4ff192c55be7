package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const objectsInput = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: R
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
---
apiVersion: v1
kind: Pod
metadata: {name: bare}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  serviceName: db
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch}
spec:
  parallelism: 5
  completions: 2
  template:
    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Node
metadata: {name: ip-10-0-0-1.ec2.internal}
---
apiVersion: v1
kind: Service
metadata: {name: web}
`

func TestObjectsFrom(t *testing.T) {
	docs, err := Decode(strings.NewReader(objectsInput))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := ObjectsFrom(docs)
	if err != nil {
		t.Fatal(err)
	}
	var pods []string
	for _, p := range objects.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	want := []string{"default/bare", "shop/web-0", "shop/web-1", "shop/web-2", "default/db-0", "default/db-1", "default/batch-0", "default/batch-1"}
	if diff := cmp.Diff(want, pods); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if got := objects.Pods[4].Labels["statefulset.kubernetes.io/pod-name"]; got != "db-0" {
		t.Errorf("StatefulSet pod-name label = %q, want db-0", got)
	}
	if objects.Pods[1].Labels["app"] != "web" {
		t.Errorf("Deployment pod lost its template labels: %v", objects.Pods[1].Labels)
	}
	counts := []int{len(objects.NodePools), len(objects.NodeClasses), len(objects.DaemonSets), len(objects.Nodes), len(objects.Ignored)}
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1}, counts); diff != "" {
		t.Errorf("NodePools, NodeClasses, DaemonSets, Nodes, Ignored counts (-want +got):\n%s", diff)
	}
	if got := objects.NodeClasses[0].Spec.AMISelectorTerms[0].Alias; got != "al2023@latest" {
		t.Errorf("EC2NodeClass alias = %q", got)
	}
}

func TestObjectsFromUnknownField(t *testing.T) {
	docs, err := Decode(strings.NewReader("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec: {templateSpec: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ObjectsFrom(docs)
	if err == nil || !strings.Contains(err.Error(), "NodePool np") || !strings.Contains(err.Error(), "templateSpec") {
		t.Fatalf("ObjectsFrom() error = %v, want one naming NodePool np and the field templateSpec", err)
	}
}
