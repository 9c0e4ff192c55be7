package manifest

import (
	"strings"
	"testing"
)

// FuzzDecode reads arbitrary manifests: Decode and ObjectsFrom never panic, every rejection is an
// error with a message, and every pod they expand has a name and a namespace.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template: {spec: {containers: [{name: c, image: x}]}}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n"))
	f.Add([]byte(`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"parallelism":4,"completions":2}}`))
	f.Add([]byte("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {template: {spec: {requirements: [{key: a, operator: In, values: [b]}]}}}\n---\n---\napiVersion: v1\nkind: Service\n"))
	f.Add([]byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: -1}\n"))
	f.Add([]byte("kind: Pod\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := DecodeBytes(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		objects, err := ObjectsFrom(docs)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, p := range objects.Pods {
			if p.Namespace == "" {
				t.Fatalf("pod %q has no namespace", p.Name)
			}
		}
	})
}

// TestObjectsFromRefusesCounts: a negative or enormous replica count (found by FuzzDecode: a
// negative one panicked in make) is an error naming the document and the field.
func TestObjectsFromRefusesCounts(t *testing.T) {
	for _, tc := range []struct{ manifest, want string }{
		{"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {replicas: -1}\n", "reading StatefulSet db, spec.replicas is -1, want 0 or more"},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2147483647}\n", "reading Deployment web, spec.replicas is 2147483647, which brings the manifests to more than 100000 pods"},
		{"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: -3}\n", "reading Job j, spec.parallelism is -3, want 0 or more"},
		{"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {completions: -2}\n", "reading Job j, spec.completions is -2, want 0 or more"},
		{"apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: a}\nspec: {replicas: 60000}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: b}\nspec: {replicas: 60000}\n", "reading ReplicaSet b, spec.replicas is 60000, which brings"},
	} {
		docs, err := DecodeBytes([]byte(tc.manifest))
		if err != nil {
			t.Fatalf("decoding: %v", err)
		}
		_, err = ObjectsFrom(docs)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("err = %v, want one starting %q", err, tc.want)
		}
	}
}
