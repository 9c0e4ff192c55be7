package worldcapture

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/world"
)

// Marshal writes a captured world as a world file: YAML, led by a comment saying where it came
// from. The controller's policy is written as YAML like the rest.
func Marshal(f *world.File) ([]byte, error) {
	out, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding the world, %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The world of EKS cluster %s in %s (account %s), captured by joiner world capture.\n", f.Cluster.Name, f.Cluster.Region, f.Cluster.AccountID)
	b.WriteString("# Run it: joiner dev --world FILE. The controller's access key is the emulator's own.\n")
	b.Write(out)
	return b.Bytes(), nil
}
