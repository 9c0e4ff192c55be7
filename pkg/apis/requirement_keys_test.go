package apis_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// karpenterAWSRequirementKeys are the karpenter.k8s.aws keys that Karpenter's CRDs (aws/
// karpenter-provider-aws at 1d927085dd81) admit in NodePool and NodeClaim requirements; every
// other key of the domain is refused there.
var karpenterAWSRequirementKeys = []string{
	"instance-tenancy", "capacity-reservation-type", "capacity-reservation-id",
	"capacity-reservation-interruptible", "ec2nodeclass", "instance-encryption-in-transit-supported",
	"nitro-sandbox", "instance-category", "instance-hypervisor", "instance-family",
	"instance-generation", "instance-local-nvme", "instance-size", "instance-cpu",
	"instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz", "instance-memory",
	"instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name",
	"instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-memory",
	"instance-accelerator-name", "instance-accelerator-manufacturer", "instance-accelerator-count",
	"instance-capability-flex", "placement-group-id", "placement-group-partition",
}

// requirementPool is a NodePool with one Exists requirement on key.
func requirementPool(key string) *v1.NodePool {
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "key-" + strings.NewReplacer("/", "-", ".", "-").Replace(key)},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{{Key: key, Operator: v1.NodeSelectorOpExists}},
			NodeClassRef: &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: "default"},
		}}},
	}
}

// TestKarpenterAWSRequirementKeys holds the karpenter.k8s.aws requirement keys to Karpenter's
// list: every key Joiner sets on its nodes (awsv1.WellKnownLabels in the domain, and the
// EC2NodeClass label) is admitted, every key Karpenter has and Joiner does not set
// (awsv1.LabelsNotSet) is refused saying so, and together they are Karpenter's list.
func TestKarpenterAWSRequirementKeys(t *testing.T) {
	var set []string
	for _, k := range append(awsv1.WellKnownLabels(), awsv1.LabelNodeClass) {
		if strings.HasPrefix(k, awsv1.Group+"/") {
			set = append(set, k)
		}
	}
	notSet := awsv1.LabelsNotSet()
	var upstream []string
	for _, k := range karpenterAWSRequirementKeys {
		upstream = append(upstream, awsv1.Group+"/"+k)
	}
	if both := slices.Concat(set, notSet); !sameSet(both, upstream) {
		t.Errorf("Joiner's keys (set %v, not set %v) are not Karpenter's %v", set, notSet, upstream)
	}

	dryRun := &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, key := range set {
		t.Run("admits "+key, func(t *testing.T) {
			if err := env.Client.Create(t.Context(), requirementPool(key), dryRun); err != nil {
				t.Errorf("a requirement on %s is refused: %v", key, err)
			}
		})
	}
	for _, key := range notSet {
		t.Run("refuses "+key, func(t *testing.T) {
			err := env.Client.Create(t.Context(), requirementPool(key), dryRun)
			checkRefusal(t, err, admissionCase{
				WantField:   "spec.template.spec.requirements[0]",
				WantMessage: fmt.Sprintf("key %s is a Karpenter label Joiner does not set on its nodes", key),
			})
		})
	}
	t.Run("admits topology.k8s.aws/zone-id", func(t *testing.T) {
		if err := env.Client.Create(t.Context(), requirementPool(awsv1.LabelTopologyZoneID), dryRun); err != nil {
			t.Errorf("a requirement on %s is refused: %v", awsv1.LabelTopologyZoneID, err)
		}
	})
	t.Run("admits the region", func(t *testing.T) {
		if err := env.Client.Create(t.Context(), requirementPool(corev1.LabelTopologyRegion), dryRun); err != nil {
			t.Errorf("a requirement on %s is refused: %v", corev1.LabelTopologyRegion, err)
		}
	})
	t.Run("a refusal is Invalid", func(t *testing.T) {
		err := env.Client.Create(t.Context(), requirementPool(awsv1.Group+"/instance-foo"), dryRun)
		if !apierrors.IsInvalid(err) {
			t.Errorf("error = %v, want Invalid", err)
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}
