package ami

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Variants of the EKS-optimized AMIs.
const (
	VariantStandard = "standard"
	VariantNvidia   = "nvidia"
	VariantNeuron   = "neuron"
)

// Parameter is one SSM parameter holding an AMI ID, and what an instance type must meet to boot
// that AMI.
type Parameter struct {
	// Name is the SSM parameter name.
	Name string
	// Architecture is the kubernetes.io/arch value of the AMI.
	Architecture string
	// Variant is standard, nvidia or neuron.
	Variant string
	// Requirements are the node requirements of the AMI: its architecture, and accelerators
	// (none for standard, NVIDIA GPUs for nvidia, AWS accelerators for neuron).
	Requirements []corev1.NodeSelectorRequirement
	// Mutable is true when the parameter follows new releases (version latest), so it must be
	// re-read periodically.
	Mutable bool
}

// AliasParameters returns the SSM parameters an alias (family@version) stands for on a
// Kubernetes version (major.minor, such as 1.31): one per architecture and variant the family
// publishes.
func AliasParameters(alias, k8sVersion string) ([]Parameter, error) {
	family, version, ok := strings.Cut(alias, "@")
	if !ok || version == "" {
		return nil, fmt.Errorf("alias %q is not family@version", alias)
	}
	latest := version == awsv1.AliasVersionLatest
	var out []Parameter
	add := func(name, arch, variant string) {
		out = append(out, Parameter{Name: name, Architecture: arch, Variant: variant, Requirements: requirements(arch, variant), Mutable: latest})
	}
	switch family {
	case awsv1.AliasFamilyAL2:
		for _, v := range []struct{ suffix, nameInfix, arch, variant string }{
			{"", "", v1.ArchitectureAmd64, VariantStandard},
			{"-arm64", "-arm64", v1.ArchitectureArm64, VariantStandard},
			{"-gpu", "-gpu", v1.ArchitectureAmd64, VariantNvidia},
		} {
			release := "recommended"
			if !latest {
				release = fmt.Sprintf("amazon-eks%s-node-%s-%s", v.nameInfix, k8sVersion, version)
			}
			add(fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2%s/%s/image_id", k8sVersion, v.suffix, release), v.arch, v.variant)
		}
	case awsv1.AliasFamilyAL2023:
		for _, v := range []struct{ ec2Arch, arch, variant string }{
			{"x86_64", v1.ArchitectureAmd64, VariantStandard},
			{"x86_64", v1.ArchitectureAmd64, VariantNvidia},
			{"x86_64", v1.ArchitectureAmd64, VariantNeuron},
			{"arm64", v1.ArchitectureArm64, VariantStandard},
			{"arm64", v1.ArchitectureArm64, VariantNvidia},
		} {
			release := "recommended"
			if !latest {
				release = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", v.ec2Arch, v.variant, k8sVersion, version)
			}
			add(fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8sVersion, v.ec2Arch, v.variant, release), v.arch, v.variant)
		}
	case awsv1.AliasFamilyBottlerocket:
		release := "latest"
		if !latest {
			release = strings.TrimPrefix(version, "v")
		}
		for _, v := range []struct{ suffix, ec2Arch, arch, variant string }{
			{"", "x86_64", v1.ArchitectureAmd64, VariantStandard},
			{"", "arm64", v1.ArchitectureArm64, VariantStandard},
			{"-nvidia", "x86_64", v1.ArchitectureAmd64, VariantNvidia},
			{"-nvidia", "arm64", v1.ArchitectureArm64, VariantNvidia},
		} {
			add(fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id", k8sVersion, v.suffix, v.ec2Arch, release), v.arch, v.variant)
		}
	default:
		return nil, fmt.Errorf("alias %q: family must be al2, al2023 or bottlerocket", alias)
	}
	return out, nil
}

// requirements are the node requirements of an AMI of an architecture and variant.
func requirements(arch, variant string) []corev1.NodeSelectorRequirement {
	reqs := []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
	switch variant {
	case VariantNvidia:
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: awsv1.LabelInstanceGPUManufacturer, Operator: corev1.NodeSelectorOpIn, Values: []string{"nvidia"}})
	case VariantNeuron:
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: awsv1.LabelInstanceAcceleratorManufacturer, Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}})
	default:
		reqs = append(reqs,
			corev1.NodeSelectorRequirement{Key: awsv1.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist},
			corev1.NodeSelectorRequirement{Key: awsv1.LabelInstanceAcceleratorCount, Operator: corev1.NodeSelectorOpDoesNotExist})
	}
	return reqs
}
