package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/localstack"
	"github.com/joinerhq/joiner/pkg/manifest"
)

// startScenario starts the local stack on the field case's world file, as
// `joiner dev --world test/scenarios/CASE.world.yaml` does (no samples), then applies the case's
// manifests as `kubectl apply -f test/scenarios/CASE.yaml` would. The controller runs with least
// privilege (leastPrivilege; a world's own controllerPolicy stays). The stack stops when the
// test ends.
func startScenario(t *testing.T, name string) *localstack.Stack {
	t.Helper()
	stack := startWorld(t, name)
	applyScenario(t, stack, name)
	return stack
}

// startWorld starts the local stack on test/scenarios/NAME.world.yaml, with nothing applied.
func startWorld(t *testing.T, name string) *localstack.Stack {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	dir := filepath.Join("..", "scenarios")
	work := t.TempDir()
	var out bytes.Buffer
	stack, err := localstack.Start(ctx, leastPrivilege(localstack.Options{
		AssetsDir: programs.assets, WorkDir: work, Out: &out, World: filepath.Join(dir, name+".world.yaml"),
		EmulatorPath: programs.awsemu, EmulatorArgs: fastEmulator,
		JoinerPath: programs.controller, ControllerArgs: []string{"--leader-elect=false", "--log-level", "debug"},
	}))
	if err != nil {
		t.Fatalf("starting the local stack on world %s: %v\n%s", name, err, out.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack output:\n%s", out.String())
			dumpLogs(t, filepath.Join(work, "logs"))
		}
		if err := stack.Stop(); err != nil {
			t.Errorf("stopping the stack: %v", err)
		}
	})
	return stack
}

// applyScenario applies test/scenarios/NAME.yaml as `kubectl apply -f` would, and returns when it
// began: the time from which a diagnosis is counted.
func applyScenario(t *testing.T, stack *localstack.Stack, name string) time.Time {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := manifest.DecodeBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	for _, obj := range objects {
		if err := stack.Apply(context.WithoutCancel(t.Context()), obj); err != nil {
			t.Fatal(err)
		}
	}
	return applied
}

// waitNodeJoinFalse waits, at most the 60 s the issue allows, for the EC2NodeClass's
// NodeJoinReady to be False with reason and a message containing each of texts, and Ready not
// True.
func waitNodeJoinFalse(t *testing.T, stack *localstack.Stack, class, reason string, texts ...string) {
	t.Helper()
	eventually(t, 60*time.Second, "EC2NodeClass "+class+": NodeJoinReady=False "+reason, func(ctx context.Context) (bool, string, error) {
		var nc awsv1.EC2NodeClass
		if err := stack.Client.Get(ctx, client.ObjectKey{Name: class}, &nc); err != nil {
			return false, "", err
		}
		cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeNodeJoinReady)
		if cond == nil {
			return false, "no NodeJoinReady", nil
		}
		done := cond.Status == metav1.ConditionFalse && cond.Reason == reason && !meta.IsStatusConditionTrue(nc.Status.Conditions, awsv1.ConditionTypeReady)
		for _, text := range texts {
			done = done && strings.Contains(cond.Message, text)
		}
		return done, cond.Reason + ": " + cond.Message, nil
	})
}

// TestScenarioS1UnmappedNodeRole: on S1's world (aws-auth maps the controller's role as nodes,
// no access entry for the node role, mode API_AND_CONFIG_MAP) the EC2NodeClass says so before any
// launch: NodeJoinReady=False AWSAuthMapsControllerRole with the exact mapRoles entry, Ready held
// back, no instance launched. Once the operator maps the node role in aws-auth, the pods run,
// with nothing restarted.
func TestScenarioS1UnmappedNodeRole(t *testing.T) {
	applied := time.Now()
	stack := startScenario(t, "s1-unmapped-node-role")
	ctx := t.Context()
	const entry = "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n  username: system:node:{{EC2PrivateDNSName}}\n  groups:\n  - system:bootstrappers\n  - system:nodes\n"
	waitNodeJoinFalse(t, stack, "default", "AWSAuthMapsControllerRole", entry)
	t.Logf("S1 diagnosed %.0fs after the manifests were applied", time.Since(applied).Seconds())
	if instances, err := stack.Instances(ctx); err != nil || len(instances) != 0 {
		t.Errorf("instances launched for a class whose nodes cannot join: %v %v", instances, err)
	}

	// The fix, as an operator applies it: the node role mapped in aws-auth.
	var awsAuth corev1.ConfigMap
	if err := stack.Client.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "aws-auth"}, &awsAuth); err != nil {
		t.Fatal(err)
	}
	awsAuth.Data["mapRoles"] = entry
	if err := stack.Client.Update(ctx, &awsAuth); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "inflate's pods running on registered nodes", func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := stack.Client.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"app": "inflate"}); err != nil {
			return false, "", err
		}
		running := 0
		var states []string
		for _, p := range pods.Items {
			states = append(states, fmt.Sprintf("%s %s %s", p.Name, p.Status.Phase, p.Spec.NodeName))
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, strings.Join(states, "; "), nil
	})
	instances, err := stack.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range instances {
		if i.BootReason == "Unauthorized" {
			t.Errorf("instance %s was refused: %s", i.ID, i.BootMessage)
		}
	}
}

// TestScenarioS2CustomAMITaintArgs: on S2's world the custom AMI boots with AL2's bootstrap.sh,
// which drops the single-word --kubelet-extra-args=... of the class's userData. Joiner refuses
// the class before launching anything, naming the flag; an instance launched as the field's
// controller launched it (the class's rendered userData on the custom AMI, through the world's
// controller identity) registers a Node without karpenter.sh/unregistered:NoExecute, as the
// field saw it.
func TestScenarioS2CustomAMITaintArgs(t *testing.T) {
	applied := time.Now()
	stack := startScenario(t, "s2-custom-ami-taint-args")
	ctx := t.Context()
	waitNodeJoinFalse(t, stack, "custom-ami", "BootstrapOptionIgnored", "The corrected line: /etc/eks/bootstrap.sh", "--kubelet-extra-args '--register-with-taints=")
	t.Logf("S2 diagnosed %.0fs after the manifests were applied", time.Since(applied).Seconds())
	var nc awsv1.EC2NodeClass
	eventually(t, 2*time.Minute, "EC2NodeClass custom-ami refused for its userData", func(ctx context.Context) (bool, string, error) {
		if err := stack.Client.Get(ctx, client.ObjectKey{Name: "custom-ami"}, &nc); err != nil {
			return false, "", err
		}
		cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
		if cond == nil {
			return false, "not validated", nil
		}
		return cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "--kubelet-extra-args") &&
			nc.Status.InstanceProfile != "" && len(nc.Status.AMIs) > 0 && len(nc.Status.Subnets) > 0, cond.Reason + ": " + cond.Message, nil
	})
	if got := nc.Status.AMIs[0].ID; got != "ami-0fedcba9876543210" {
		t.Fatalf("the class resolved AMI %s, not the world's custom AMI", got)
	}

	cfg := aws.Config{Region: stack.World.Cluster.Region, BaseEndpoint: aws.String(stack.EmulatorURL),
		Credentials: credentials.NewStaticCredentialsProvider(stack.World.ControllerAccessKeyID, "local-stack", "")}
	cluster, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	endpoint, ca := aws.ToString(cluster.Cluster.Endpoint), aws.ToString(cluster.Cluster.CertificateAuthority.Data)
	// The emulated instance's shell does not run the AWS CLI: put in what the userData's
	// `$(aws eks describe-cluster ...)` prints on a real instance.
	field := nc.DeepCopy()
	script := strings.Replace(aws.ToString(nc.Spec.UserData), `$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.certificateAuthority.data' --output text)`, ca, 1)
	script = strings.Replace(script, `$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.endpoint' --output text)`, endpoint, 1)
	if strings.Contains(script, "$(aws ") {
		t.Fatalf("the class's userData calls the AWS CLI in a way this test does not stand in for:\n%s", script)
	}
	field.Spec.UserData = &script
	claim := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "field", Labels: map[string]string{v1.NodePoolLabelKey: "default"}}}
	rendered, err := userdata.Render(userdata.NewOptions(userdata.Cluster{Name: "demo", Endpoint: endpoint, CABundle: ca,
		CIDR: aws.ToString(cluster.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr)}, field, claim, nil))
	if err != nil {
		t.Fatal(err)
	}
	groups := make([]string, 0, len(nc.Status.SecurityGroups))
	for _, g := range nc.Status.SecurityGroups {
		groups = append(groups, g.ID)
	}
	fieldTags := []ec2types.Tag{
		{Key: aws.String(awsv1.TagKeyPrefixCluster + "demo"), Value: aws.String("owned")},
		{Key: aws.String(awsv1.TagKeyEKSClusterName), Value: aws.String("demo")},
		{Key: aws.String(v1.NodePoolLabelKey), Value: aws.String("default")},
	}
	run, err := ec2.NewFromConfig(cfg).RunInstances(ctx, &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: aws.String(nc.Status.AMIs[0].ID), InstanceType: ec2types.InstanceTypeM5Large,
		SubnetId: aws.String(nc.Status.Subnets[0].ID), SecurityGroupIds: groups,
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String(nc.Status.InstanceProfile)},
		UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte(rendered.UserData))),
		// Tagged as the field's controller (Karpenter) tagged its launches, which the world's
		// policy (Karpenter's documented one, scoped by these tags) requires of the instance,
		// its volumes and its network interface.
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: fieldTags}, {ResourceType: ec2types.ResourceTypeVolume, Tags: fieldTags},
			{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: fieldTags},
		},
	})
	if err != nil {
		t.Fatalf("launching as the field's controller did: %v", err)
	}
	id := aws.ToString(run.Instances[0].InstanceId)
	var booted localstack.Instance
	eventually(t, 2*time.Minute, "instance "+id+" registered its Node", func(ctx context.Context) (bool, string, error) {
		instances, err := stack.Instances(ctx)
		if err != nil {
			return false, "", err
		}
		for _, i := range instances {
			if i.ID == id {
				booted = i
				return i.NodeName != "", i.State + " " + i.BootReason + " " + i.BootMessage, nil
			}
		}
		return false, "not listed", nil
	})
	var node corev1.Node
	if err := stack.Client.Get(ctx, client.ObjectKey{Name: booted.NodeName}, &node); err != nil {
		t.Fatalf("Node %s: %v", booted.NodeName, err)
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == v1.UnregisteredTaintKey {
			t.Errorf("Node %s registered with %v", node.Name, taint)
		}
	}
	if console := strings.Join(booted.Console, "\n"); !strings.Contains(console, "/etc/eks/bootstrap.sh demo") {
		t.Errorf("console of %s does not show the userData's bootstrap.sh call:\n%s", id, console)
	}
}

// TestScenarioS4RunInstancesAuthCheck: on S4's world the controller's policy lets `default`
// validate, and refuses `batch` (iam:PassRole on BatchNodeRole-demo) and `tenant-a` (the launch
// of its instances, whose tags lack the cost-center the policy's condition asks for).
func TestScenarioS4RunInstancesAuthCheck(t *testing.T) {
	applied := time.Now()
	stack := startScenario(t, "s4-runinstances-auth-check")
	want := map[string]struct {
		ok   bool
		text string
	}{
		"default":  {ok: true},
		"batch":    {text: "iam:PassRole on arn:aws:iam::111122223333:role/BatchNodeRole-demo"},
		"tenant-a": {text: "ec2:RunInstances on arn:aws:ec2:us-west-2:111122223333:instance/*"},
	}
	eventually(t, 2*time.Minute, "each class validated as its policy allows", func(ctx context.Context) (bool, string, error) {
		var seen []string
		done := true
		for name, w := range want {
			var nc awsv1.EC2NodeClass
			if err := stack.Client.Get(ctx, client.ObjectKey{Name: name}, &nc); err != nil {
				return false, "", err
			}
			cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
			if cond == nil {
				done = false
				seen = append(seen, name+": not validated")
				continue
			}
			seen = append(seen, fmt.Sprintf("%s: %s %s %s", name, cond.Status, cond.Reason, cond.Message))
			switch {
			case w.ok && cond.Status != metav1.ConditionTrue:
				done = false
			case !w.ok && (cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, w.text)):
				done = false
			}
			// The join check carries the same denial, per class: one broken class hides no other.
			join := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeNodeJoinReady)
			switch {
			case join == nil:
				done = false
			case w.ok && join.Status == metav1.ConditionFalse:
				done = false
				seen = append(seen, fmt.Sprintf("%s NodeJoinReady: %s %s", name, join.Reason, join.Message))
			case !w.ok && (join.Status != metav1.ConditionFalse || !strings.Contains(join.Message, w.text)):
				done = false
				seen = append(seen, fmt.Sprintf("%s NodeJoinReady: %s %s %s", name, join.Status, join.Reason, join.Message))
			}
		}
		return done, strings.Join(seen, "\n"), nil
	})
	t.Logf("S4 diagnosed %.0fs after the manifests were applied", time.Since(applied).Seconds())
}
