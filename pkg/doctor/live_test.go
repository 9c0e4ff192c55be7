package doctor

import (
	"slices"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

// TestLive runs live doctor against a real API server and the AWS emulator, reached as `joiner
// doctor` reaches AWS (the default credential chain, AWS_ENDPOINT_URL): S1's cluster (aws-auth
// mapping the controller's role, the node role's access entry deleted), a class whose instance
// profile does not exist, one whose AMI id EC2 does not know, one whose only AMI is arm64 under an
// amd64 NodePool, one whose status holds S4's failed validation, and a pod no NodePool can take. Then the administrator creates the node role's
// EC2_LINUX access entry, and the role finding goes.
func TestLive(t *testing.T) {
	ctx := t.Context()
	e := startEmulator(t)
	for _, o := range liveObjects(e) {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// S4: the controller's validation of tenant-a failed, as its status says.
	tenant := &awsv1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "tenant-a"}, tenant); err != nil {
		t.Fatal(err)
	}
	tenant.Status.Conditions = []metav1.Condition{{Type: awsv1.ConditionTypeValidationSucceeded, Status: metav1.ConditionFalse, Reason: "RunInstancesAuthCheckFailed",
		Message: "ec2:RunInstances denied: statement AllowScopedEC2InstanceActionsWithTags requires aws:RequestTag/cost-center", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	// A class switched to NewNodeRole whose managed instance profile still holds the old role.
	switched := &awsv1.EC2NodeClass{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "switched"}, switched); err != nil {
		t.Fatal(err)
	}
	switched.Status.InstanceProfile = e.seed.NodeRole // the seed's profile holds the seed's node role
	if err := env.Client.Status().Update(ctx, switched); err != nil {
		t.Fatal(err)
	}
	o := Options{ClusterName: e.seed.ClusterName}
	obs, err := ReadLive(ctx, env.Client, e.cloud, o)
	if err != nil {
		t.Fatal(err)
	}
	r := Diagnose(obs)
	checkLiveReport(t, r, e)
	t.Log(text(r))

	// The administrator's fix: the node role's EC2_LINUX access entry.
	if _, err := e.cloud.EKS.(*eks.Client).CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: awssdk.String(e.seed.ClusterName),
		PrincipalArn: awssdk.String(e.nodeRole), Type: awssdk.String("EC2_LINUX")}); err != nil {
		t.Fatal(err)
	}
	obs, err = ReadLive(ctx, env.Client, e.cloud, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(Diagnose(obs)); slices.ContainsFunc(got, func(k string) bool {
		return strings.Contains(k, "aws-auth") || strings.Contains(k, "NodeRoleNotMapped")
	}) {
		t.Errorf("after the access entry, role findings remain: %v", got)
	}
}

// emulator is the AWS side of the live test.
type emulator struct {
	cloud                    AWS
	seed                     state.SeedOptions
	account                  string
	nodeRole, controllerRole string
	armAMI                   string
}

// startEmulator serves the emulator, points the default credential chain and AWS_ENDPOINT_URL at
// it, and removes the node role's access entry (S1).
func startEmulator(t *testing.T) *emulator {
	ctx := t.Context()
	kit := emutest.Start(t)
	e := &emulator{seed: kit.Seed}
	kit.Update(t, func(w *state.World) error {
		e.account = w.AccountID
		w.PutRole("NewNodeRole", nil) // the role a class was just switched to
		return nil
	})
	kit.SetEnv(t)
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: "us-west-2"})
	if err != nil {
		t.Fatal(err)
	}
	e.cloud = NewAWS(cfg, kit.Clock)
	e.nodeRole = "arn:aws:iam::" + e.account + ":role/" + e.seed.NodeRole
	e.controllerRole = "arn:aws:iam::" + e.account + ":role/" + e.seed.ControllerRole
	if _, err := e.cloud.EKS.(*eks.Client).DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: awssdk.String(e.seed.ClusterName), PrincipalArn: awssdk.String(e.nodeRole)}); err != nil {
		t.Fatal(err)
	}
	arm, err := e.cloud.EC2.(*ec2.Client).DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: awssdk.String("architecture"), Values: []string{"arm64"}}}})
	if err != nil || len(arm.Images) == 0 {
		t.Fatalf("no arm64 image in the emulator: %v", err)
	}
	e.armAMI = awssdk.ToString(arm.Images[0].ImageId)
	return e
}

// liveObjects are the cluster's objects: S1's ServiceAccount and aws-auth, the classes, their
// NodePools and a pod.
func liveObjects(e *emulator) []client.Object {
	class := func(name string, mutate func(*awsv1.EC2NodeClass)) *awsv1.EC2NodeClass {
		nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: awsv1.EC2NodeClassSpec{
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			Role:                       e.seed.NodeRole,
		}}
		mutate(nc)
		return nc
	}
	al2023 := "AL2023"
	profile := "MissingInstanceProfile"
	pool := func(name, nodeClass string, labels map[string]string) *v1.NodePool {
		np := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
		np.Spec.Template.Labels = labels
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: nodeClass}
		np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelArchStable, Operator: v1.NodeSelectorOpIn, Values: []string{"amd64"}}}
		return np
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Namespace: "kube-system", Annotations: map[string]string{IRSAAnnotation: e.controllerRole}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", Namespace: "kube-system"}, Data: map[string]string{"mapRoles": "- rolearn: " + e.controllerRole + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"}},
		class("default", func(*awsv1.EC2NodeClass) {}),
		class("tenant-a", func(*awsv1.EC2NodeClass) {}),
		class("switched", func(nc *awsv1.EC2NodeClass) { nc.Spec.Role = "NewNodeRole" }),
		class("batch", func(nc *awsv1.EC2NodeClass) { nc.Spec.Role, nc.Spec.InstanceProfile = "", &profile }),
		class("gone", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMIFamily, nc.Spec.AMISelectorTerms = &al2023, []awsv1.AMISelectorTerm{{ID: "ami-0123456789abcdef0"}}
		}),
		class("graviton", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMIFamily, nc.Spec.AMISelectorTerms = &al2023, []awsv1.AMISelectorTerm{{ID: e.armAMI}}
		}),
		pool("default", "default", map[string]string{"pod-type": "app"}),
		pool("batch", "batch", nil),
		pool("gone", "gone", nil),
		pool("graviton", "graviton", nil),
		pool("orphan", "nowhere", nil),
		func() *v1.NodePool {
			np := pool("mixed", "graviton", nil)
			np.Spec.Template.Spec.Requirements = []v1.NodeSelectorRequirementWithMinValues{{Key: corev1.LabelOSStable, Operator: v1.NodeSelectorOpIn, Values: []string{"linux"}}}
			return np
		}(),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "typo", Namespace: "default"}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"pod-type": "ap"}, Containers: []corev1.Container{{Name: "c", Image: "pause"}}}},
	}
}

// checkLiveReport: every defect found, from what live reading saw.
func checkLiveReport(t *testing.T, r *Report, e *emulator) {
	t.Helper()
	got := keys(r)
	want := []string{
		"Error ConfigMap/kube-system/aws-auth AWSAuthMapsControllerRole",
		"Error EC2NodeClass/batch InstanceProfileNotFound",
		"Error EC2NodeClass/gone AMINotFound",
		"Error EC2NodeClass/tenant-a RunInstancesAuthCheckFailed",
		"Error NodePool/graviton AMIArchitectureMismatch",
		"Error NodePool/orphan NodeClassNotFound",
		"Warning EC2NodeClass/switched InstanceProfileRoleDiffers",
		"Warning NodePool/mixed ArchitectureWithoutAMI",
		"Warning Pod/default/typo PodFitsNoNodePool",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no finding %q", w)
		}
	}
	if len(slices.DeleteFunc(slices.Clone(got), func(k string) bool { return !strings.HasSuffix(k, "AWSAuthMapsControllerRole") })) != 1 {
		t.Errorf("the aws-auth mistake of three classes sharing one role is not one finding: %v", got)
	}
	if slices.Contains(got, "Warning EC2NodeClass/batch NodeRoleUnknown") {
		t.Errorf("the missing instance profile is reported twice: %v", got)
	}
	if r.Mode != ModeLive || r.AccountID != e.account || r.AuthenticationMode != "API_AND_CONFIG_MAP" || !r.HasError() {
		t.Errorf("report mode %s account %s mode %s errors %d", r.Mode, r.AccountID, r.AuthenticationMode, r.Errors)
	}
	if slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Reason == ReasonNotVisible }) {
		t.Errorf("something was not visible:\n%s", text(r))
	}
	for _, f := range r.Findings {
		if f.Reason == "AWSAuthMapsControllerRole" && (strings.Contains(f.Message, "unless") || !strings.Contains(f.Fix, "--cluster-name demo --principal-arn "+e.nodeRole)) {
			t.Errorf("access entries were visible, the finding hedges or its fix is wrong: %+v", f)
		}
		if f.Reason == "AWSAuthMapsControllerRole" && !strings.Contains(f.Message, "The same holds for EC2NodeClass gone, graviton, switched, tenant-a.") {
			t.Errorf("the classes sharing the node role are not named: %+v", f)
		}
		if f.Reason == "AMIArchitectureMismatch" && !strings.Contains(f.Message, e.armAMI+" (arm64)") {
			t.Errorf("the AMI's architecture from DescribeImages is not named: %+v", f)
		}
	}
}

func keys(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, string(f.Severity)+" "+f.Object+" "+f.Reason)
	}
	return out
}
