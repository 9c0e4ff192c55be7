package drift

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func arch(a string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{a}}}
}

func TestNodeClassHash(t *testing.T) {
	base := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{
		AMIFamily:           ptr.To("AL2023"),
		Role:                "KarpenterNodeRole-demo",
		SubnetSelectorTerms: []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"a": "b"}}},
		Tags:                map[string]string{"team": "web", "env": "prod"},
	}}
	h, err := NodeClassHash(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*awsv1.EC2NodeClass)
		same   bool
	}{
		{name: "nothing", mutate: func(*awsv1.EC2NodeClass) {}, same: true},
		{name: "a selector term", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].Tags["a"] = "c" }, same: true},
		{name: "status", mutate: func(nc *awsv1.EC2NodeClass) { nc.Status.InstanceProfile = "x" }, same: true},
		{name: "the role", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.Role = "Other" }},
		{name: "userData", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.UserData = ptr.To("#!/bin/bash") }},
		{name: "a tag", mutate: func(nc *awsv1.EC2NodeClass) { nc.Spec.Tags["env"] = "dev" }},
		{name: "kubelet", mutate: func(nc *awsv1.EC2NodeClass) {
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](20)}
		}},
	}
	for _, tt := range tests {
		nc := base.DeepCopy()
		tt.mutate(nc)
		got, err := NodeClassHash(nc)
		if err != nil {
			t.Fatal(err)
		}
		if (got == h) != tt.same {
			t.Errorf("%s: hash %s vs %s, want same=%v", tt.name, got, h, tt.same)
		}
	}
}

func TestReason(t *testing.T) {
	nodeClass := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{awsv1.AnnotationEC2NodeClassHash: "h1", awsv1.AnnotationEC2NodeClassHashVersion: HashVersion}},
		Status: awsv1.EC2NodeClassStatus{
			AMIs: []awsv1.AMI{
				{ID: "ami-new-amd", Requirements: arch("amd64")},
				{ID: "ami-old-amd", Deprecated: true, Requirements: arch("amd64")},
				{ID: "ami-old-arm", Deprecated: true, Requirements: arch("arm64")},
			},
			Subnets:        []awsv1.Subnet{{ID: "subnet-a", Zone: "us-west-2a"}},
			SecurityGroups: []awsv1.SecurityGroup{{ID: "sg-1"}, {ID: "sg-2"}},
		},
	}
	claim := func(hash, version string) *v1.NodeClaim {
		return &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{awsv1.AnnotationEC2NodeClassHash: hash, awsv1.AnnotationEC2NodeClassHashVersion: version}}}
	}
	good := Instance{ImageID: "ami-new-amd", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-2", "sg-1"}}
	tests := []struct {
		name  string
		claim *v1.NodeClaim
		inst  Instance
		want  cloudprovider.DriftReason
	}{
		{name: "matches", claim: claim("h1", HashVersion), inst: good},
		{name: "static fields changed", claim: claim("h0", HashVersion), inst: good, want: ReasonNodeClass},
		{name: "hash of another version is not compared", claim: claim("h0", "v0"), inst: good},
		{name: "AMI no longer selected", claim: claim("h1", HashVersion), inst: Instance{ImageID: "ami-gone", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1", "sg-2"}}, want: ReasonAMI},
		{name: "deprecated AMI with a replacement", claim: claim("h1", HashVersion), inst: Instance{ImageID: "ami-old-amd", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1", "sg-2"}}, want: ReasonAMI},
		{name: "deprecated AMI without a replacement", claim: claim("h1", HashVersion), inst: Instance{ImageID: "ami-old-arm", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1", "sg-2"}}},
		{name: "subnet no longer selected", claim: claim("h1", HashVersion), inst: Instance{ImageID: "ami-new-amd", SubnetID: "subnet-b", SecurityGroupIDs: []string{"sg-1", "sg-2"}}, want: ReasonSubnet},
		{name: "security groups differ", claim: claim("h1", HashVersion), inst: Instance{ImageID: "ami-new-amd", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1"}}, want: ReasonSecurityGroup},
	}
	for _, tt := range tests {
		if got := Reason(nodeClass, tt.claim, tt.inst); got != tt.want {
			t.Errorf("%s: Reason = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Reason(&awsv1.EC2NodeClass{}, &v1.NodeClaim{}, Instance{ImageID: "x"}); got != "" {
		t.Errorf("an unresolved node class drifted a node: %q", got)
	}
}
