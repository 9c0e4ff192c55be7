package instancetype

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// NameParts splits an instance type name into the values of the karpenter.k8s.aws/instance-*
// name labels: m7i.large is category "m", family "m7i", generation "7", size "large". Parts that
// the name does not have are empty.
func NameParts(name string) (category, family, generation, size string) {
	family, size, _ = strings.Cut(name, ".")
	i := strings.IndexFunc(family, unicode.IsDigit)
	if i < 0 {
		return family, family, "", size
	}
	category = family[:i]
	rest := family[i:]
	j := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) })
	if j < 0 {
		j = len(rest)
	}
	return category, family, rest[:j], size
}

// Requirements returns the labels a node of this instance type carries, each with the values it
// may take: fixed facts of the type (one value), and the zones, zone IDs (when the offerings know
// them) and capacity types of its available offerings (several). Values are sorted.
func Requirements(info Info, offerings []*cloudprovider.Offering) map[string][]string {
	category, family, generation, size := NameParts(info.Name)
	reqs := map[string][]string{
		corev1.LabelInstanceTypeStable:    {info.Name},
		corev1.LabelOSStable:              {string(corev1.Linux)},
		awsv1.LabelInstanceCPU:            {strconv.FormatInt(info.VCPUs, 10)},
		awsv1.LabelInstanceMemory:         {strconv.FormatInt(info.MemoryMiB, 10)},
		awsv1.LabelInstanceTenancy:        {string(ec2types.TenancyDefault)},
		awsv1.LabelInstanceCapabilityFlex: {strconv.FormatBool(strings.HasSuffix(family, "-flex"))},
	}
	if arch := Architecture(info.Architecture); arch != "" {
		reqs[corev1.LabelArchStable] = []string{arch}
	}
	for key, value := range map[string]string{
		awsv1.LabelInstanceCategory: category, awsv1.LabelInstanceFamily: family,
		awsv1.LabelInstanceGeneration: generation, awsv1.LabelInstanceSize: size,
	} {
		if value != "" {
			reqs[key] = []string{value}
		}
	}
	zones, zoneIDs, capacityTypes := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, o := range offerings {
		if o.Available {
			zones[o.Zone] = true
			capacityTypes[o.CapacityType] = true
			if o.ZoneID != "" {
				zoneIDs[o.ZoneID] = true
			}
		}
	}
	reqs[corev1.LabelTopologyZone] = slices.Sorted(maps.Keys(zones))
	if len(zoneIDs) > 0 {
		reqs[awsv1.LabelTopologyZoneID] = slices.Sorted(maps.Keys(zoneIDs))
	}
	reqs[v1.CapacityTypeLabelKey] = slices.Sorted(maps.Keys(capacityTypes))
	return reqs
}

// Architecture maps EC2's processor architecture to the kubernetes.io/arch value: x86_64 is
// amd64, arm64 is arm64. Others (i386, x86_64_mac) are not launched and map to "".
func Architecture(ec2Architecture string) string {
	switch ec2Architecture {
	case "x86_64":
		return v1.ArchitectureAmd64
	case "arm64":
		return v1.ArchitectureArm64
	}
	return ""
}
