// Package crd carries Joiner's generated CustomResourceDefinitions (bases/, written by
// `make generate`) inside the binary, so that the controller, the local stack and the tests
// install exactly the CRDs that are checked in.
package crd

import (
	"embed"
	"fmt"
	"io/fs"
	"path"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// CustomResourceDefinitions decodes every checked-in CRD, in file-name order.
func CustomResourceDefinitions() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing embedded CRDs, %w", err)
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		raw, err := bases.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading embedded CRD %s, %w", path.Base(name), err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("decoding embedded CRD %s, %w", path.Base(name), err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
