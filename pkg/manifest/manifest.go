// Package manifest reads Kubernetes manifests: multi-document YAML or JSON, as operators write
// them for kubectl apply. Decode gives unstructured documents; ObjectsFrom types the ones a
// scheduling decision needs and expands workload controllers into the pods they would create.
// It talks to no cluster.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode reads every document of a multi-document YAML (or JSON) stream. Empty documents are
// skipped; a List kind is flattened into its items. A document without apiVersion or kind is an
// error naming the document's position.
func Decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objects []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw := map[string]any{}
		if err := decoder.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objects, nil
			}
			return nil, fmt.Errorf("decoding document %d, %w", doc, err)
		}
		if len(raw) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: raw}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind: every manifest needs both", doc)
		}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return nil, fmt.Errorf("decoding list in document %d, %w", doc, err)
			}
			for i := range list.Items {
				objects = append(objects, &list.Items[i])
			}
			continue
		}
		objects = append(objects, obj)
	}
}

// DecodeBytes is Decode over an in-memory manifest.
func DecodeBytes(b []byte) ([]*unstructured.Unstructured, error) {
	return Decode(bytes.NewReader(b))
}
