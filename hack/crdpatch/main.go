// Command crdpatch adds to the generated CRDs what controller-gen markers cannot express: the
// length and character rules on the values of a NodePool's template labels, and the syntax of
// taint and startup-taint keys and values of NodePools and NodeClaims (corev1.Taint carries no
// markers; Karpenter's published CRDs have the same patterns). They belong in the OpenAPI schema
// (additionalProperties, items) because a CEL rule over unbounded strings exceeds the API
// server's cost budget. `make generate` runs it after controller-gen.
package main

import (
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// labelValuePattern is the Kubernetes label value syntax: up to 63 letters, digits, '-', '_' or
// '.', starting and ending with a letter or digit, or empty.
const labelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`

// taintPattern is the syntax of a taint's key and value as Karpenter's CRDs give it: an optional
// DNS subdomain prefix and '/', then a name of letters, digits, '-', '_' and '.', starting and
// ending with a letter or digit.
const taintPattern = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: crdpatch config/crd/bases/karpenter.sh_nodepools.yaml config/crd/bases/karpenter.sh_nodeclaims.yaml")
		os.Exit(2)
	}
	if err := patchNodePoolCRD(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
	if err := patch(os.Args[2], func(schema any) error { return patchTaints(schema, "spec") }); err != nil {
		fmt.Fprintln(os.Stderr, "crdpatch:", err)
		os.Exit(1)
	}
}

// patchTaints adds the key and value syntax to the taints and startupTaints under the keys.
func patchTaints(schema any, keys ...string) error {
	for _, list := range []string{"taints", "startupTaints"} {
		path := []string{}
		for _, k := range keys {
			path = append(path, "properties", k)
		}
		path = append(path, "properties", list, "items", "properties")
		props, ok := lookup(schema, path...).(map[string]any)
		if !ok {
			return fmt.Errorf("no schema for the items of %s.%s", strings.Join(keys, "."), list)
		}
		for _, field := range []string{"key", "value"} {
			f, ok := props[field].(map[string]any)
			if !ok {
				return fmt.Errorf("no schema for %s.%s[].%s", strings.Join(keys, "."), list, field)
			}
			f["pattern"] = taintPattern
		}
		props["key"].(map[string]any)["minLength"] = 1
	}
	return nil
}

func patchNodePoolCRD(path string) error {
	return patch(path, func(schema any) error {
		value, ok := lookup(schema, "properties", "spec", "properties", "template",
			"properties", "metadata", "properties", "labels", "additionalProperties").(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no schema for the values of spec.template.metadata.labels", path)
		}
		value["maxLength"] = 63
		value["pattern"] = labelValuePattern
		return patchTaints(schema, "spec", "template", "spec")
	})
}

// patch applies change to the openAPIV3Schema of every version of the CRD in path.
func patch(path string, change func(schema any) error) error {
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
		if err := change(lookup(version, "schema", "openAPIV3Schema")); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
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
