package provider

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
)

// TestWellKnownLabels: a NodeClaim asking for a zone by its ID launches there, and the launched
// and the described NodeClaim carry the labels Karpenter puts on its nodes: the zone and its ID,
// the region, the EC2NodeClass, tenancy and the flex capability, beside the instance type's.
func TestWellKnownLabels(t *testing.T) {
	e := newEnv(t)
	zoneIDs := map[string]string{}
	for _, s := range e.nodeClass.Status.Subnets {
		zoneIDs[s.Zone] = s.ZoneID
	}
	wantID := zoneIDs["us-west-2c"]
	if wantID == "" {
		t.Fatalf("no zone ID for us-west-2c in the node class's subnets %+v", e.nodeClass.Status.Subnets)
	}
	claim := nodeClaim("general-zoneid",
		req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large", "c5.large"),
		req(awsv1.LabelTopologyZoneID, v1.NodeSelectorOpIn, wantID))
	got, err := e.provider.Create(t.Context(), claim)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		corev1.LabelTopologyZone:          "us-west-2c",
		awsv1.LabelTopologyZoneID:         wantID,
		corev1.LabelTopologyRegion:        "us-west-2",
		awsv1.LabelNodeClass:              "default",
		awsv1.LabelInstanceTenancy:        "default",
		awsv1.LabelInstanceCapabilityFlex: "false",
		corev1.LabelOSStable:              "linux",
		awsv1.LabelInstanceHypervisor:     "nitro",
	}
	for k, v := range want {
		if got.Labels[k] != v {
			t.Errorf("launched: label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	described, err := e.provider.Get(t.Context(), got.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if described.Labels[k] != v {
			t.Errorf("described: label %s = %q, want %q", k, described.Labels[k], v)
		}
	}
	if zone := e.instance(instance.InstanceID(got.Status.ProviderID)).Zone; zone != "us-west-2c" {
		t.Errorf("instance launched in %s, want us-west-2c", zone)
	}
}
