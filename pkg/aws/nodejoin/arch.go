package nodejoin

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// ReasonAMIArchitectureMismatch: no AMI of the class can boot any instance type a NodePool
// allows.
const ReasonAMIArchitectureMismatch = "AMIArchitectureMismatch"

// checkArchitectures finds the NodePools of the class for which no resolved AMI fits any instance
// type the NodePool allows: such a NodePool can never launch. An AMI that fits none of one
// NodePool's instance types but another's is normal (an alias resolves one AMI per
// architecture) and is not reported.
func checkArchitectures(in Inputs) []Finding {
	amis := in.NodeClass.Status.AMIs
	if len(amis) == 0 {
		return nil
	}
	var out []Finding
	for _, pool := range in.NodePools {
		poolReqs, err := scheduling.FromNodePoolRequirements(pool.Spec.Template.Spec.Requirements)
		if err != nil {
			continue
		}
		allowed := allowedArchitectures(poolReqs, in.InstanceTypes)
		if allowed == nil {
			continue
		}
		if slices.ContainsFunc(amis, func(a awsv1.AMI) bool {
			return slices.ContainsFunc(allowed, func(arch string) bool { return amiAllows(a, arch) })
		}) {
			continue
		}
		var described []string
		for _, a := range amis {
			described = append(described, fmt.Sprintf("%s (%s)", a.ID, strings.Join(amiArchitectures(a), ", ")))
		}
		what := "allows instance types of architecture " + strings.Join(allowed, ", ")
		if len(allowed) == 0 {
			what = "allows no instance type at all"
		}
		out = append(out, Finding{Severity: SeverityError, Object: "NodePool/" + pool.Name, Reason: ReasonAMIArchitectureMismatch,
			Message: fmt.Sprintf("NodePool %s %s, but EC2NodeClass %s resolves only AMI %s, so nothing can launch (0 instances)",
				pool.Name, what, in.NodeClass.Name, strings.Join(described, ", ")),
			Fix: fmt.Sprintf("select an AMI of architecture %s in EC2NodeClass %s spec.amiSelectorTerms (an alias such as al2023@latest resolves one per architecture), or allow instance types of architecture %s in NodePool %s (kubernetes.io/arch and the instance-type or instance-family requirements)",
				strings.Join(allowed, " or "), in.NodeClass.Name, strings.Join(uniqueArchitectures(amis), " or "), pool.Name)})
	}
	return out
}

// allowedArchitectures returns the architectures of the instance types the NodePool allows; with
// no instance types, the values of its kubernetes.io/arch requirement. nil means unknown.
func allowedArchitectures(pool scheduling.Requirements, types []*cloudprovider.InstanceType) []string {
	if len(types) == 0 {
		r, ok := pool[corev1.LabelArchStable]
		if !ok {
			return nil
		}
		var out []string
		for _, arch := range []string{v1.ArchitectureAmd64, v1.ArchitectureArm64} {
			if r.Has(arch) {
				out = append(out, arch)
			}
		}
		return out
	}
	out := []string{}
	for _, it := range types {
		if !instanceTypeAllowed(pool, it.Requirements) {
			continue
		}
		for _, arch := range it.Requirements[corev1.LabelArchStable] {
			if !slices.Contains(out, arch) {
				out = append(out, arch)
			}
		}
	}
	slices.Sort(out)
	return out
}

// instanceTypeAllowed: every requirement of the pool on a label the instance type defines admits
// one of its values.
func instanceTypeAllowed(pool scheduling.Requirements, labels map[string][]string) bool {
	for key, r := range pool {
		values, ok := labels[key]
		if !ok {
			continue
		}
		if !slices.ContainsFunc(values, r.Has) {
			return false
		}
	}
	return true
}

func amiArchitectures(a awsv1.AMI) []string {
	for _, r := range a.Requirements {
		if r.Key == corev1.LabelArchStable && r.Operator == corev1.NodeSelectorOpIn {
			return r.Values
		}
	}
	return []string{"any"}
}

func amiAllows(a awsv1.AMI, arch string) bool {
	archs := amiArchitectures(a)
	return slices.Contains(archs, "any") || slices.Contains(archs, arch)
}

func uniqueArchitectures(amis []awsv1.AMI) []string {
	var out []string
	for _, a := range amis {
		for _, arch := range amiArchitectures(a) {
			if !slices.Contains(out, arch) {
				out = append(out, arch)
			}
		}
	}
	return out
}
