// Package samples carries the manifests that the local stack applies: an EC2NodeClass, a
// NodePool, the aws-auth mapping of the node role, and a Deployment to scale. They are also the
// starting point the README gives new users.
package samples

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed *.yaml
var files embed.FS

// Manifests returns the sample manifests, in the order they should be applied.
func Manifests() ([][]byte, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing sample manifests, %w", err)
	}
	out := make([][]byte, 0, len(names))
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading sample %s, %w", name, err)
		}
		out = append(out, raw)
	}
	return out, nil
}
