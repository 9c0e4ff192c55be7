package worldcapture

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/world"
)

// Marshal writes a captured world as a world file: YAML, led by a comment saying where it came
// from. The controller's policy is written as YAML like the rest. A list the capture found empty
// is written as [] (a list left out of a world file keeps the demo world's).
func Marshal(f *world.File) ([]byte, error) {
	out, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding the world, %w", err)
	}
	for _, l := range []struct {
		key   string
		empty bool
	}{
		{"nodeRoles", f.NodeRoles != nil && len(f.NodeRoles) == 0},
		{"instanceProfiles", f.InstanceProfiles != nil && len(f.InstanceProfiles) == 0},
		{"accessEntries", f.AccessEntries != nil && len(f.AccessEntries) == 0},
		{"subnets", f.Subnets != nil && len(f.Subnets) == 0},
		{"securityGroups", f.SecurityGroups != nil && len(f.SecurityGroups) == 0},
	} {
		if l.empty {
			out = append(out, l.key+": []\n"...)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The world of EKS cluster %s in %s (account %s), captured by joiner world capture.\n", f.Cluster.Name, f.Cluster.Region, f.Cluster.AccountID)
	b.WriteString("# Run it: joiner dev --world FILE. The controller's access key is the emulator's own.\n")
	b.Write(out)
	return b.Bytes(), nil
}
