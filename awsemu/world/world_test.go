package world_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
)

func loadCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// valid is a world every malformed case below breaks in one place.
const valid = `
cluster:
  name: prod
  accountId: "210987654321"
  region: us-west-2
  kubernetesVersion: "1.31"
  authenticationMode: API_AND_CONFIG_MAP
  vpcId: vpc-0a1b2c3d4e5f60718
  vpcCidr: 10.20.0.0/16
controllerRole: arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod
nodeRoles:
- name: KarpenterNodeRole-prod
  path: /nodes/
instanceProfiles:
- instanceProfileName: prod-nodes
  roles: [arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod]
accessEntries:
- principalArn: arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod
  type: EC2_LINUX
subnets:
- subnetId: subnet-0a1b2c3d4e5f60001
  availabilityZone: us-west-2a
  cidrBlock: 10.20.0.0/19
- subnetId: subnet-0a1b2c3d4e5f60002
  availabilityZone: us-west-2b
  cidrBlock: 10.20.32.0/19
securityGroups:
- groupId: sg-0a1b2c3d4e5f60001
  groupName: prod-nodes
images:
- imageId: ami-0a1b2c3d4e5f67890
  name: hardened-al2-1.31
  architecture: x86_64
  bootstrap: al2-bootstrap.sh
`

func TestDecodeValid(t *testing.T) {
	f, err := world.Decode([]byte(valid), loadCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	o := f.SeedOptions(state.DefaultSeed())
	if o.ControllerRole != "KarpenterControllerRole-prod" || o.ControllerRolePath != "/platform/" || o.ControllerAccessKey != "AKIDJOINERCONTROLLER" {
		t.Errorf("controller %s%s key %s", o.ControllerRolePath, o.ControllerRole, o.ControllerAccessKey)
	}
	if o.InterruptionQueue != "prod" || o.Region != "us-west-2" || o.AccountID != "210987654321" || o.ClusterVersion != "1.31" {
		t.Errorf("queue %s region %s account %s version %s", o.InterruptionQueue, o.Region, o.AccountID, o.ClusterVersion)
	}
	if got := o.Subnets[0].AvailableIPs; got != 8187 {
		t.Errorf("available addresses of a /19 = %d, want 8187 (8192 less the 5 AWS reserves)", got)
	}
	if got := o.Images[0]; got.Family != state.FamilyAL2 || got.OwnerID != "210987654321" || got.KubernetesVersion != "1.31" {
		t.Errorf("image %+v", got)
	}
}

// TestDecodeJSON: a world file may be JSON, as the AWS CLI prints, strictly too.
func TestDecodeJSON(t *testing.T) {
	cat := loadCatalog(t)
	f, err := world.Decode([]byte(`{"cluster": {"name": "prod", "kubernetesVersion": "1.32"}, "subnets": [], "images": [{"imageId": "ami-0123456789abcdef0", "name": "custom", "architecture": "arm64"}]}`), cat)
	if err != nil {
		t.Fatal(err)
	}
	if f.Cluster.KubernetesVersion != "1.32" || f.Subnets == nil || len(f.Images) != 1 {
		t.Errorf("decoded %+v", f)
	}
	_, err = world.Decode([]byte(`{"cluster": {"name": "prod"}, "images": [{"ImageId": "ami-0123456789abcdef0"}]}`), cat)
	if err == nil || !strings.Contains(err.Error(), "images[0].ImageId") {
		t.Errorf("error %v, want one naming images[0].ImageId", err)
	}
}

// TestDecodeRefusesMalformedWorlds: each world is refused, and the refusal names the field's
// path.
func TestDecodeRefusesMalformedWorlds(t *testing.T) {
	cat := loadCatalog(t)
	edit := func(old, new string) string {
		if !strings.Contains(valid, old) {
			t.Fatalf("the valid world has no %q", old)
		}
		return strings.Replace(valid, old, new, 1)
	}
	for _, tt := range []struct {
		name, world, path, reason string
	}{
		{"unknown top-level field", valid + "clusters: []\n", "clusters", "not a field"},
		{"unknown field in the cluster", edit("  region: us-west-2\n", "  region: us-west-2\n  displayName: x\n"), "cluster.displayName", "not a field"},
		{"field in the wrong case", edit("  cidrBlock: 10.20.0.0/19", "  CidrBlock: 10.20.0.0/19"), "subnets[0].CidrBlock", "case-sensitive"},
		{"no cluster name", edit("  name: prod\n", ""), "cluster.name", "required"},
		{"version written as a number", edit(`kubernetesVersion: "1.31"`, "kubernetesVersion: 1.30"), "cluster.kubernetesVersion", "quote it"},
		{"tag value that YAML reads as a boolean", edit("  groupName: prod-nodes\n", "  groupName: prod-nodes\n  tags: {public: yes}\n"), "securityGroups[0].tags.public", "boolean"},
		{"region not emulated", edit("region: us-west-2", "region: us-west-9"), "cluster.region", "not emulated"},
		{"account id too short", edit(`accountId: "210987654321"`, `accountId: "2109"`), "cluster.accountId", "12 digits"},
		{"unknown authentication mode", edit("API_AND_CONFIG_MAP", "IAM"), "cluster.authenticationMode", "CONFIG_MAP"},
		{"subnet outside the VPC", edit("10.20.32.0/19", "10.99.32.0/19"), "subnets[1].cidrBlock", "outside the VPC"},
		{"subnets overlap", edit("10.20.32.0/19", "10.20.16.0/20"), "subnets[1].cidrBlock", "overlaps"},
		{"subnet in a zone of another region", edit("us-west-2b", "eu-west-1b"), "subnets[1].availabilityZone", "not a zone of us-west-2"},
		{"subnet in another VPC", edit("  cidrBlock: 10.20.0.0/19", "  cidrBlock: 10.20.0.0/19\n  vpcId: vpc-0ffffffffffffffff"), "subnets[0].vpcId", "the world has one VPC"},
		{"subnet listed twice", edit("subnet-0a1b2c3d4e5f60002", "subnet-0a1b2c3d4e5f60001"), "subnets[1].subnetId", "twice"},
		{"more free addresses than the subnet has", edit("  cidrBlock: 10.20.0.0/19", "  cidrBlock: 10.20.0.0/19\n  availableIpAddressCount: 9000"), "subnets[0].availableIpAddressCount", "8187"},
		{"access entry of an unknown type", edit("type: EC2_LINUX", "type: EC2_NODE"), "accessEntries[0].type", "not an access entry type"},
		{"access entry for another cluster", edit("  type: EC2_LINUX", "  type: EC2_LINUX\n  clusterName: staging"), "accessEntries[0].clusterName", "staging"},
		{"node entry with groups", edit("  type: EC2_LINUX", "  type: EC2_LINUX\n  kubernetesGroups: [ops]"), "accessEntries[0].kubernetesGroups", "EKS assigns an entry of type EC2_LINUX the groups [system:nodes]"},
		{"access entry for a role at another path", edit("- principalArn: arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod", "- principalArn: arn:aws:iam::210987654321:role/other/KarpenterNodeRole-prod"), "accessEntries[0].principalArn", "a path is part of the ARN"},
		{"namespace scope without namespaces", edit("  type: EC2_LINUX", "  type: STANDARD\n  accessPolicies: [{policyArn: arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy, accessScope: {type: namespace}}]"),
			"accessEntries[0].accessPolicies[0].accessScope.namespaces", "at least one namespace"},
		{"instance profile holding a role that does not exist", edit("  roles: [arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod]", "  roles: [arn:aws:iam::210987654321:role/BatchNodeRole]"), "instanceProfiles[0].roles[0]", "does not exist"},
		{"instance profile role without its path", edit("  roles: [arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod]", "  roles: [arn:aws:iam::210987654321:role/KarpenterNodeRole-prod]"), "instanceProfiles[0].roles[0]", "path"},
		{"instance profile with two roles", edit("  roles: [arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod]", "  roles: [arn:aws:iam::210987654321:role/nodes/KarpenterNodeRole-prod, "+
			"arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod]"), "instanceProfiles[0].roles", "at most one"},
		{"node role path without slashes", edit("path: /nodes/", "path: nodes"), "nodeRoles[0].path", "starts and ends with /"},
		{"node role ARN naming another role", edit("  path: /nodes/\n", "  path: /nodes/\n  arn: arn:aws:iam::210987654321:role/nodes/Other\n"), "nodeRoles[0].arn", "names role Other"},
		{"node role that is the controller's", edit("- name: KarpenterNodeRole-prod", "- name: KarpenterControllerRole-prod"), "nodeRoles[0].name", "controller"},
		{"controller role of another account", edit("controllerRole: arn:aws:iam::210987654321:", "controllerRole: arn:aws:iam::999999999999:"), "controllerRole", "account 999999999999"},
		{"controller role that is a user", edit("controllerRole: arn:aws:iam::210987654321:role/", "controllerRole: arn:aws:iam::210987654321:user/"), "controllerRole", "not an IAM role ARN"},
		{"policy with an unknown effect", valid + `controllerPolicy: {Version: "2012-10-17", Statement: [{Effect: Permit, Action: "*", Resource: "*"}]}` + "\n", "controllerPolicy.Statement[0].Effect", "Allow or Deny"},
		{"policy key in the plural", valid + `controllerPolicy: {Version: "2012-10-17", Statements: []}` + "\n", "controllerPolicy.Statements", "not a key"},
		{"policy statement without a resource", valid + `controllerPolicy: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "ec2:*"}]}` + "\n", "controllerPolicy.Statement[0].Resource", "Resource"},
		{"image architecture as Kubernetes names it", edit("architecture: x86_64", "architecture: amd64"), "images[0].architecture", "x86_64"},
		{"image that boots in an unknown way", edit("bootstrap: al2-bootstrap.sh", "bootstrap: cloud-init"), "images[0].bootstrap", "nodeadm"},
		{"image creation date not a time", edit("  bootstrap: al2-bootstrap.sh", "  bootstrap: al2-bootstrap.sh\n  creationDate: last tuesday"), "images[0].creationDate", "RFC 3339"},
		{"security group id malformed", edit("sg-0a1b2c3d4e5f60001", "group-1"), "securityGroups[0].groupId", "not a security group id"},
		{"queue name with a dot", edit("  vpcId:", "  interruptionQueue: prod.fifo.x\n  vpcId:"), "cluster.interruptionQueue", "SQS queue name"},
		{"subnets without the VPC's CIDR", edit("  vpcCidr: 10.20.0.0/16\n", ""), "cluster.vpcCidr", "required when subnets are listed"},
		{"empty file", "", "cluster.name", "required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := world.Decode([]byte(tt.world), cat)
			if err == nil {
				t.Fatalf("accepted: %+v", f)
			}
			var we *world.Error
			if !errors.As(err, &we) {
				t.Fatalf("error %v is not a *world.Error", err)
			}
			for _, p := range we.Problems {
				if p.Path == tt.path && strings.Contains(p.Reason, tt.reason) {
					return
				}
			}
			t.Errorf("no problem at %s mentioning %q; got:\n%v", tt.path, tt.reason, err)
		})
	}
}

// TestDecodeReportsEveryProblem: validation does not stop at the first problem.
func TestDecodeReportsEveryProblem(t *testing.T) {
	_, err := world.Decode([]byte("cluster: {name: x, region: nowhere, authenticationMode: IAM}\nimages: [{imageId: ami-1, name: ab, architecture: amd64}]\n"), loadCatalog(t))
	var we *world.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v", err)
	}
	var paths []string
	for _, p := range we.Problems {
		paths = append(paths, p.Path)
	}
	want := []string{"cluster.region", "cluster.authenticationMode", "images[0].imageId", "images[0].name", "images[0].architecture"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s\n%v", diff, err)
	}
}

// TestLoadNamesTheFile: the refusal says which file.
func TestLoadNamesTheFile(t *testing.T) {
	path := t.TempDir() + "/bad.world.yaml"
	if err := os.WriteFile(path, []byte("cluster: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := world.Load(path, loadCatalog(t))
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "cluster.name") {
		t.Errorf("error %v", err)
	}
}

// TestOmittedListsKeepTheDemoWorld: a world of only a cluster name seeds what the demo seeds,
// and an empty list means none.
func TestOmittedListsKeepTheDemoWorld(t *testing.T) {
	cat := loadCatalog(t)
	f, err := world.Decode([]byte("cluster: {name: demo}\n"), cat)
	if err != nil {
		t.Fatal(err)
	}
	o := f.SeedOptions(state.DefaultSeed())
	if o.NodeRoles != nil || o.InstanceProfiles != nil || o.AccessEntries != nil || o.Subnets != nil || o.SecurityGroups != nil {
		t.Errorf("omitted lists are not left to the demo defaults: %+v", o)
	}
	if o.NodeRole != "KarpenterNodeRole-demo" || o.ControllerRole != state.DefaultSeed().ControllerRole || o.ControllerPolicy != "" {
		t.Errorf("node role %s, controller role %s, policy %q", o.NodeRole, o.ControllerRole, o.ControllerPolicy)
	}
	f, err = world.Decode([]byte("cluster: {name: demo}\naccessEntries: []\n"), cat)
	if err != nil {
		t.Fatal(err)
	}
	if o := f.SeedOptions(state.DefaultSeed()); o.AccessEntries == nil || len(o.AccessEntries) != 0 {
		t.Errorf("accessEntries: [] gives %#v, want an empty list", o.AccessEntries)
	}
}

// TestScenarioWorldsAreValid: every field case's world file decodes, and lies beside its
// manifests.
func TestScenarioWorldsAreValid(t *testing.T) {
	paths, err := filepath.Glob("../../test/scenarios/*.world.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no world files under test/scenarios (%v)", err)
	}
	cat := loadCatalog(t)
	for _, path := range paths {
		if _, err := world.Load(path, cat); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(strings.TrimSuffix(path, ".world.yaml") + ".yaml"); err != nil {
			t.Errorf("world %s has no manifests beside it: %v", path, err)
		}
	}
}

// TestDocumentedExampleIsValid: the complete example of docs/world.md decodes, and sets every
// field of the schema.
func TestDocumentedExampleIsValid(t *testing.T) {
	raw, err := os.ReadFile("../../docs/world.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "## A complete example")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/world.md has no complete example in a yaml block")
	}
	if _, err := world.Decode([]byte(example), loadCatalog(t)); err != nil {
		t.Fatal(err)
	}
	settable, readOnly := jsonFields(reflect.TypeFor[world.File](), false)
	for _, field := range settable {
		if !strings.Contains(example, field+":") {
			t.Errorf("the example does not show %s", field)
		}
	}
	// The read-only fields, which the world ignores, need not be in the example, but the
	// reference lists them.
	for _, field := range readOnly {
		if !strings.Contains(string(raw), "`"+field+"`") {
			t.Errorf("docs/world.md does not list the read-only field %s", field)
		}
	}
}

// jsonFields lists the JSON names of t's fields and of the fields of its structs, recursively:
// those a world sets, and those of the embedded *ReadOnly structs. readOnly says t is one.
func jsonFields(t reflect.Type, readOnly bool) (settable, ignored []string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, nil
	}
	for f := range t.Fields() {
		if f.Anonymous {
			s, i := jsonFields(f.Type, readOnly || strings.HasSuffix(f.Type.Name(), "ReadOnly"))
			settable, ignored = append(settable, s...), append(ignored, i...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if readOnly {
			ignored = append(ignored, name)
		} else {
			settable = append(settable, name)
		}
		s, i := jsonFields(f.Type, readOnly)
		settable, ignored = append(settable, s...), append(ignored, i...)
	}
	return settable, ignored
}
