// Command crdpatch adds to the generated CRDs what controller-gen markers cannot express: the
// length and character rules on the values of a NodePool's template labels. They belong in the
// OpenAPI schema (additionalProperties) because a CEL rule over unbounded map values exceeds the
// API server's cost budget. `make generate` runs it after controller-gen.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// labelValuePattern is the Kubernetes label value syntax: up to 63 letters, digits, '-', '_' or
// '.', starting and ending with a letter or digit, or empty.
const labelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch config/crd/bases/karpenter.sh_nodepools.yaml")
		os.Exit(2)
	}
	if err := patchNodePoolCRD(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
}

func patchNodePoolCRD(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return fmt.Errorf("decoding %s, %w", path, err)
	}
	versions, _ := lookup(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("%s has no spec.versions", path)
	}
	for _, version := range versions {
		value, ok := lookup(version, "schema", "openAPIV3Schema", "properties", "spec", "properties", "template",
			"properties", "metadata", "properties", "labels", "additionalProperties").(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no schema for the values of spec.template.metadata.labels", path)
		}
		value["maxLength"] = 63
		value["pattern"] = labelValuePattern
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	// controller-gen starts each file with a document separator; keep the file as it writes it.
	return os.WriteFile(path, append([]byte("---\n"), out...), 0o644)
}

// lookup follows keys through nested maps, returning nil where a key is missing.
func lookup(node any, keys ...string) any {
	for _, key := range keys {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[key]
	}
	return node
}
