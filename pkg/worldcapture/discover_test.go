package worldcapture_test

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/world"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

// discoverWorld has two subnets and two groups of which a class selects one each, two node
// roles of which a class names one by spec.role and the other through spec.instanceProfile, and
// two images of which a class selects one by name.
const discoverWorld = `
cluster: {name: prod, accountId: "210987654321", region: eu-west-1, vpcCidr: 10.20.0.0/16, vpcId: vpc-0a1b2c3d4e5f60718, interruptionQueue: prod-q}
controllerRole: arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod
nodeRoles: [{name: NodesA}, {name: NodesB, path: /batch/}, {name: Unused}]
instanceProfiles: [{instanceProfileName: BatchProfile, roles: ["arn:aws:iam::210987654321:role/batch/NodesB"]}]
accessEntries: []
subnets:
- {subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: eu-west-1a, cidrBlock: 10.20.0.0/19, tags: {karpenter.sh/discovery: prod}}
- {subnetId: subnet-0a1b2c3d4e5f60002, availabilityZone: eu-west-1b, cidrBlock: 10.20.32.0/19}
securityGroups:
- {groupId: sg-0a1b2c3d4e5f60001, groupName: nodes, tags: {karpenter.sh/discovery: prod}}
- {groupId: sg-0a1b2c3d4e5f60002, groupName: other}
images:
- {imageId: ami-0a1b2c3d4e5f67890, name: prod-al2023-1.31-a, architecture: x86_64, bootstrap: nodeadm}
- {imageId: ami-0a1b2c3d4e5f67891, name: other-image, architecture: x86_64}
`

// TestDiscoverCapturesWhatTheClassesSelect reads the classes and the controller from a cluster
// and captures only what they name and select, with the controller's IRSA role and queue.
func TestDiscoverCapturesWhatTheClassesSelect(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := world.Decode([]byte(discoverWorld), cat)
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	discovery := map[string]string{"karpenter.sh/discovery": "prod"}
	classes := []*awsv1.EC2NodeClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: awsv1.EC2NodeClassSpec{Role: "NodesA",
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: discovery}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: discovery}},
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Name: "prod-*"}, {Alias: "al2023@latest"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: awsv1.EC2NodeClassSpec{InstanceProfile: aws.String("BatchProfile"),
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{ID: "subnet-0a1b2c3d4e5f60001"}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Name: "nodes"}},
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}}},
	}
	labels := map[string]string{"app.kubernetes.io/name": "joiner"}
	controller := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "joiner", Namespace: "joiner", Labels: labels},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{ServiceAccountName: "joiner", Containers: []corev1.Container{{Name: "controller",
				Env: []corev1.EnvVar{{Name: "INTERRUPTION_QUEUE", Value: "prod-q"}}}}}}}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "joiner", Namespace: "joiner",
		Annotations: map[string]string{worldcapture.IRSAAnnotation: f.ControllerRole}}}
	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(controller, sa)
	for _, c := range classes {
		builder = builder.WithObjects(c)
	}
	d, notes, err := worldcapture.Discover(t.Context(), builder.Build())
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 || d.ControllerRole != f.ControllerRole || d.InterruptionQueue != "prod-q" || len(d.NodeClasses) != 2 {
		t.Fatalf("discovered %+v, notes %v", d, notes)
	}
	got, _ := captureWorld(t, emulator(t, f, authz.AdminAccessKey), worldcapture.Options{ClusterName: "prod", Region: "eu-west-1", Cluster: d}, cat)
	var roles, subnets, groups, images []string
	for _, r := range got.NodeRoles {
		roles = append(roles, r.Path+r.Name)
	}
	for _, s := range got.Subnets {
		subnets = append(subnets, s.SubnetID)
	}
	for _, g := range got.SecurityGroups {
		groups = append(groups, g.GroupID)
	}
	for _, i := range got.Images {
		images = append(images, i.ImageID)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"node roles", roles, []string{"NodesA", "/batch/NodesB"}},
		{"subnets", subnets, []string{"subnet-0a1b2c3d4e5f60001"}},
		{"security groups", groups, []string{"sg-0a1b2c3d4e5f60001"}},
		{"images", images, []string{"ami-0a1b2c3d4e5f67890"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	if got.ControllerRole != f.ControllerRole || got.Cluster.InterruptionQueue != "prod-q" || len(got.InstanceProfiles) != 1 {
		t.Errorf("controller role %s, queue %s, profiles %+v", got.ControllerRole, got.Cluster.InterruptionQueue, got.InstanceProfiles)
	}
}
