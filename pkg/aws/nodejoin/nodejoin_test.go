package nodejoin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

const (
	nodeRole       = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	nodeRoleInPath = "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo"
	controllerRole = "arn:aws:iam::111122223333:role/KarpenterControllerRole-demo"
)

func mapRoles(entries ...string) *AWSAuth {
	return &AWSAuth{Found: true, MapRoles: strings.Join(entries, "")}
}

func entryFor(arn, username string, groups ...string) string {
	s := "- rolearn: " + arn + "\n  username: " + username + "\n  groups:\n"
	for _, g := range groups {
		s += "  - " + g + "\n"
	}
	return s
}

// TestNodeRole: every authentication mode, every source seen or not, and each known mistake.
func TestNodeRole(t *testing.T) {
	good := entryFor(nodeRole, NodeUsername, BootstrappersGroup, NodesGroup)
	ec2Linux := AccessEntry{PrincipalARN: nodeRole, Type: AccessEntryTypeEC2Linux}
	cases := []struct {
		name     string
		in       Inputs
		want     []string
		wantFix  string
		wantText string
	}{
		{name: "aws-auth maps the node role", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap, AWSAuth: mapRoles(good)}},
		{name: "aws-auth maps the node role, path in the role's ARN", in: Inputs{NodeRoleARN: nodeRoleInPath, AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true, AWSAuth: mapRoles(good)}},
		{name: "EC2_LINUX access entry", in: Inputs{AuthenticationMode: AuthenticationModeAPI, AccessEntriesVisible: true, AccessEntries: []AccessEntry{ec2Linux}}},
		{name: "EC2_LINUX access entry, aws-auth unseen", in: Inputs{AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true, AccessEntries: []AccessEntry{ec2Linux}}},
		{name: "S1: the controller's role mapped instead", in: Inputs{ControllerRoleARN: controllerRole, AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor(controllerRole, NodeUsername, BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthMapsControllerRole"}, wantFix: "- rolearn: " + nodeRole + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n  - system:bootstrappers\n  - system:nodes\n"},
		{name: "S1 offline: aws-auth in the manifests, nothing else", in: Inputs{ControllerRoleARN: controllerRole,
			AWSAuth: mapRoles(entryFor(controllerRole, NodeUsername, BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthMapsControllerRole"}, wantText: "unless an EC2_LINUX access entry maps it"},
		{name: "another role mapped instead", in: Inputs{AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true,
			AWSAuth: mapRoles(entryFor("arn:aws:iam::111122223333:role/eks-nodegroup", NodeUsername, BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthMapsAnotherRole"}, wantFix: "aws eks create-access-entry --cluster-name demo --principal-arn " + nodeRole + " --type EC2_LINUX"},
		{name: "account id differs", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor("arn:aws:iam::999988887777:role/KarpenterNodeRole-demo", NodeUsername, BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthAccountMismatch"}},
		{name: "rolearn with an IAM path", in: Inputs{NodeRoleARN: nodeRoleInPath, AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor(nodeRoleInPath, NodeUsername, BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthRoleARNHasPath"}, wantFix: "rolearn: " + nodeRole + "\n"},
		{name: "STANDARD access entry shadows a correct aws-auth", in: Inputs{AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true,
			AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: "STANDARD"}}, AWSAuth: mapRoles(good)},
			want: []string{"Error AccessEntryNotEC2Linux"}, wantFix: "aws eks delete-access-entry --cluster-name demo --principal-arn " + nodeRole + " && aws eks create-access-entry"},
		{name: "STANDARD access entry ignored in CONFIG_MAP mode", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap, AccessEntriesVisible: true,
			AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: "STANDARD"}}, AWSAuth: mapRoles(good)}},
		{name: "correct aws-auth in API mode", in: Inputs{AuthenticationMode: AuthenticationModeAPI, AccessEntriesVisible: true, AWSAuth: mapRoles(good)},
			want: []string{"Error AWSAuthIgnoredInAPIMode"}},
		{name: "EC2_LINUX entry in CONFIG_MAP mode", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap, AccessEntriesVisible: true,
			AccessEntries: []AccessEntry{ec2Linux}, AWSAuth: &AWSAuth{Found: true}},
			want: []string{"Error AccessEntryIgnoredInConfigMapMode"}, wantFix: "authenticationMode=API_AND_CONFIG_MAP"},
		{name: "wrong username", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor(nodeRole, "system:node:{{SessionName}}", BootstrappersGroup, NodesGroup))},
			want: []string{"Error AWSAuthWrongUsername"}},
		{name: "without system:nodes", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor(nodeRole, NodeUsername, BootstrappersGroup))},
			want: []string{"Error AWSAuthWrongGroups"}},
		{name: "without system:bootstrappers", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap,
			AWSAuth: mapRoles(entryFor(nodeRole, NodeUsername, NodesGroup))},
			want: []string{"Warning AWSAuthMissingBootstrappers"}},
		{name: "mapRoles not YAML", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap, AWSAuth: mapRoles("- rolearn: [x\n")},
			want: []string{"Error AWSAuthInvalid"}},
		{name: "nothing mapped, everything seen", in: Inputs{AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true, AWSAuth: &AWSAuth{}},
			want: []string{"Error NodeRoleNotMapped"}, wantText: "kube-system/aws-auth does not exist"},
		{name: "API mode, no entry", in: Inputs{AuthenticationMode: AuthenticationModeAPI, AccessEntriesVisible: true},
			want: []string{"Error NodeRoleNotMapped"}, wantFix: "aws eks create-access-entry --cluster-name demo --principal-arn " + nodeRole + " --type EC2_LINUX"},
		{name: "aws-auth not visible: never an error", in: Inputs{AuthenticationMode: AuthenticationModeAPIAndConfigMap, AccessEntriesVisible: true},
			want: []string{"Warning NodeRoleMappingUnverified"}},
		{name: "offline, nothing visible: nothing said", in: Inputs{NodeRoleARN: ""}},
		{name: "offline, only the mode known", in: Inputs{AuthenticationMode: AuthenticationModeConfigMap},
			want: []string{"Warning NodeRoleMappingUnverified"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.NodeClass = classWith(awsv1.AMIFamilyAL2023, "")
			in.Cluster = testCluster
			if in.NodeRoleARN == "" && tc.name != "offline, nothing visible: nothing said" {
				in.NodeRoleARN = nodeRole
			}
			got := Check(in)
			var reasons []string
			for _, f := range got {
				reasons = append(reasons, string(f.Severity)+" "+f.Reason)
			}
			if diff := cmp.Diff(tc.want, reasons); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%v", diff, got)
			}
			if tc.wantFix != "" && !slices.ContainsFunc(got, func(f Finding) bool { return strings.Contains(f.Fix, tc.wantFix) }) {
				t.Errorf("no fix contains %q: %v", tc.wantFix, got)
			}
			if tc.wantText != "" && !slices.ContainsFunc(got, func(f Finding) bool { return strings.Contains(f.Message, tc.wantText) }) {
				t.Errorf("no message contains %q: %v", tc.wantText, got)
			}
		})
	}
}

func instanceType(name, arch, family string) *cloudprovider.InstanceType {
	return &cloudprovider.InstanceType{Name: name, Requirements: map[string][]string{
		corev1.LabelArchStable: {arch}, corev1.LabelInstanceTypeStable: {name}, awsv1.LabelInstanceFamily: {family}}}
}

func amiOf(id, arch string) awsv1.AMI {
	return awsv1.AMI{ID: id, Requirements: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}}
}

// TestArchitectures: a NodePool none of whose instance types any AMI of the class can boot.
func TestArchitectures(t *testing.T) {
	types := []*cloudprovider.InstanceType{instanceType("t2.small", "amd64", "t2"), instanceType("t4g.small", "arm64", "t4g"), instanceType("m7g.large", "arm64", "m7g")}
	armPool := pool("cicd-armapps")
	armPool.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: awsv1.LabelInstanceFamily, Operator: v1.NodeSelectorOpIn, Values: []string{"t4g"}}}
	amdPool := pool("default")
	amdPool.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	cases := []struct {
		name  string
		amis  []awsv1.AMI
		pools []*v1.NodePool
		types []*cloudprovider.InstanceType
		want  []string
	}{
		{name: "alias: one AMI per architecture", amis: []awsv1.AMI{amiOf("ami-amd", "amd64"), amiOf("ami-arm", "arm64")}, pools: []*v1.NodePool{armPool, amdPool}, types: types},
		{name: "amd64 AMI, t4g NodePool", amis: []awsv1.AMI{amiOf("ami-amd", "amd64")}, pools: []*v1.NodePool{armPool, amdPool}, types: types,
			want: []string{"NodePool/cicd-armapps: NodePool cicd-armapps allows instance types of architecture arm64, but EC2NodeClass default resolves only AMI ami-amd (amd64), so nothing can launch (0 instances)"}},
		{name: "arm64 AMI, amd64 NodePool, no instance types known", amis: []awsv1.AMI{amiOf("ami-arm", "arm64")}, pools: []*v1.NodePool{amdPool},
			want: []string{"NodePool/default: NodePool default allows instance types of architecture amd64, but EC2NodeClass default resolves only AMI ami-arm (arm64), so nothing can launch (0 instances)"}},
		{name: "no arch requirement, no instance types: unknown", amis: []awsv1.AMI{amiOf("ami-arm", "arm64")}, pools: []*v1.NodePool{armPool}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := classWith(awsv1.AMIFamilyAL2023, "")
			nc.Status.AMIs = tc.amis
			var got []string
			for _, f := range Check(Inputs{NodeClass: nc, NodePools: tc.pools, InstanceTypes: tc.types, Cluster: testCluster}) {
				if f.Reason == ReasonAMIArchitectureMismatch && f.Severity == SeverityError {
					got = append(got, f.Object+": "+f.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRankingAndJSON: errors first, then warnings, then advice; the JSON doctor prints.
func TestRankingAndJSON(t *testing.T) {
	in := Inputs{
		NodeClass: classWith(awsv1.AMIFamilyAL2023, mime("application/node.eks.aws", nodeConfig("    config:\n      clusterDNS: [172.20.0.10]\n"))),
		NodePools: []*v1.NodePool{pool("default")}, Cluster: testCluster, NodeRoleARN: nodeRole,
		AuthenticationMode: AuthenticationModeAPI, AccessEntriesVisible: true,
		Validation: &Validation{Reason: "RunInstancesAuthorizationFailed", Message: "ec2:RunInstances denied"},
	}
	got := Check(in)
	var severities []Severity
	for _, f := range got {
		severities = append(severities, f.Severity)
	}
	if diff := cmp.Diff([]Severity{SeverityError, SeverityError, SeverityAdvice}, severities); diff != "" {
		t.Errorf("(-want +got):\n%s\n%v", diff, got)
	}
	if !HasError(got) {
		t.Error("HasError false")
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"severity":"Error"`, `"object":"EC2NodeClass/default"`, `"reason":"NodeRoleNotMapped"`, `"fix":"aws eks create-access-entry`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
}
