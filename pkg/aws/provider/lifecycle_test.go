package provider

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/drift"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// TestLeakedInstances: an instance no NodeClaim names is leaked once the grace period has
// passed; one that a NodeClaim names never is; terminated ones are not listed.
func TestLeakedInstances(t *testing.T) {
	e := newEnv(t)
	kept, err := e.provider.Create(t.Context(), nodeClaim("kept"))
	if err != nil {
		t.Fatal(err)
	}
	leaked, err := e.provider.Create(t.Context(), nodeClaim("leaked"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := e.provider.Create(t.Context(), nodeClaim("gone"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.provider.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	owned := []string{kept.Status.ProviderID}
	got, err := e.instances.Leaked(t.Context(), owned, e.clock.Now().Add(instance.GarbageCollectionGrace-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("within the grace period Leaked = %v, want none", got)
	}
	got, err = e.instances.Leaked(t.Context(), owned, e.clock.Now().Add(instance.GarbageCollectionGrace))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{instance.InstanceID(leaked.Status.ProviderID)}, got); diff != "" {
		t.Errorf("Leaked (-want +got):\n%s", diff)
	}
}

func TestIsDrifted(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(nc *awsv1.EC2NodeClass, claim *v1.NodeClaim)
		want   cloudprovider.DriftReason
	}{
		{name: "unchanged", mutate: func(*awsv1.EC2NodeClass, *v1.NodeClaim) {}},
		{name: "new AMI", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			for i := range nc.Status.AMIs {
				nc.Status.AMIs[i].ID = "ami-newer" + nc.Status.AMIs[i].ID
			}
		}, want: drift.ReasonAMI},
		{name: "subnet no longer selected", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Status.Subnets = []awsv1.Subnet{{ID: "subnet-other", Zone: "us-west-2a"}}
		}, want: drift.ReasonSubnet},
		{name: "security groups changed", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Status.SecurityGroups = append(nc.Status.SecurityGroups, awsv1.SecurityGroup{ID: "sg-extra"})
		}, want: drift.ReasonSecurityGroup},
		{name: "static field changed", mutate: func(nc *awsv1.EC2NodeClass, _ *v1.NodeClaim) {
			nc.Spec.Tags = map[string]string{"team": "platform"}
			hash, _ := drift.NodeClassHash(nc)
			nc.Annotations = map[string]string{awsv1.AnnotationEC2NodeClassHash: hash, awsv1.AnnotationEC2NodeClassHashVersion: drift.HashVersion}
		}, want: drift.ReasonNodeClass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			claim, err := e.provider.Create(t.Context(), nodeClaim("drift", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
			if err != nil {
				t.Fatal(err)
			}
			nc := &awsv1.EC2NodeClass{}
			if err := e.kube.Get(t.Context(), clientKey("default"), nc); err != nil {
				t.Fatal(err)
			}
			hash, _ := drift.NodeClassHash(nc)
			nc.Annotations = map[string]string{awsv1.AnnotationEC2NodeClassHash: hash, awsv1.AnnotationEC2NodeClassHashVersion: drift.HashVersion}
			tt.mutate(nc, claim)
			want := nc.DeepCopy()
			if err := e.kube.Status().Update(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			nc.Spec, nc.Annotations = want.Spec, want.Annotations
			if err := e.kube.Update(t.Context(), nc); err != nil {
				t.Fatal(err)
			}
			got, err := e.provider.IsDrifted(t.Context(), claim)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("IsDrifted = %q, want %q", got, tt.want)
			}
		})
	}
}
