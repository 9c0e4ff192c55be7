package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// The acceptance of the join diagnosis (issue 11), one test per field case on its world: S3 and
// S5 just work; S1, S2 and S4 are diagnosed, with the reason and the fix, within diagnoseWithin
// of the manifests being applied, nothing is launched again and again for a certain cause, and
// once the operator applies the fix (a manifest, or the AWS API as the administrator) the pods
// run, with nothing restarted. Each test logs the seconds from apply to diagnosis.

const (
	// diagnoseWithin is what the issue allows from apply to diagnosis.
	diagnoseWithin = 60 * time.Second
	// runWithin bounds launch, boot, registration and the pods starting on the emulator's fast
	// timings.
	runWithin = 3 * time.Minute
	// adminAccessKey is the emulator's administrator (awsemu/authz.AdminAccessKey): the person
	// who fixes the account with the console or the CLI.
	adminAccessKey = "AKIDJOINERADMIN"
)

// adminConfig is an SDK configuration for the stack's emulator as the administrator.
func adminConfig(stack *localstack.Stack) aws.Config {
	return aws.Config{Region: stack.World.Cluster.Region, BaseEndpoint: aws.String(stack.EmulatorURL),
		Credentials: credentials.NewStaticCredentialsProvider(adminAccessKey, "local-stack", "")}
}

// podsRunning waits for want pods of the Deployment labelled app=name in default to be Running.
func podsRunning(t *testing.T, stack *localstack.Stack, within time.Duration, want int, apps ...string) {
	t.Helper()
	eventually(t, within, fmt.Sprintf("%d pods of %v Running", want, apps), func(ctx context.Context) (bool, string, error) {
		var pods corev1.PodList
		if err := stack.Client.List(ctx, &pods, client.InNamespace("default")); err != nil {
			return false, "", err
		}
		running := 0
		var states []string
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || !slices.Contains(apps, p.Labels["app"]) {
				continue
			}
			states = append(states, fmt.Sprintf("%s %s %s", p.Name, p.Status.Phase, p.Spec.NodeName))
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == want, strings.Join(states, "; "), nil
	})
}

// condition returns the class's condition of type kind, nil when absent or the class is missing.
func condition(ctx context.Context, stack *localstack.Stack, class, kind string) (*metav1.Condition, error) {
	var nc awsv1.EC2NodeClass
	if err := stack.Client.Get(ctx, client.ObjectKey{Name: class}, &nc); err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(nc.Status.Conditions, kind), nil
}

// noLaunchFor checks, for the window, that no instance is launched: a class diagnosed before any
// launch stays that way rather than launching to find out.
func noLaunchFor(t *testing.T, stack *localstack.Stack, window time.Duration) {
	t.Helper()
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		instances, err := stack.Instances(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(instances) != 0 {
			t.Fatalf("instances launched for a class diagnosed before any launch: %+v", instances)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// checkControllerNotRestarted fails the test when the controller process is not the one that
// started with the stack.
func checkControllerNotRestarted(t *testing.T, stack *localstack.Stack, pid int) {
	t.Helper()
	if got := stack.Controller.Pid(); got != pid || !stack.Controller.Running() {
		t.Errorf("the controller was restarted: pid %d, then %d", pid, got)
	}
}

// checkEveryClaimJoined fails the test unless every NodeClaim is Initialized and each was launched
// once: as many instances as NodeClaims, none of them failed or replaced.
func checkEveryClaimJoined(t *testing.T, stack *localstack.Stack) []localstack.Instance {
	t.Helper()
	eventually(t, runWithin, "every NodeClaim initialized", func(ctx context.Context) (bool, string, error) {
		return allInitialized(ctx, stack.Client)
	})
	claims, _ := checkOneInstancePerNodeClaim(t, t.Context(), stack)
	all, err := stack.Instances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(claims) {
		t.Errorf("%d instances launched for %d NodeClaims: some were relaunched", len(all), len(claims))
	}
	return all
}

// TestJoinS1AccessEntryFix: S1's node role is mapped by neither aws-auth (which maps the
// controller's role) nor an access entry. Joiner names the role and the fix within 60s (before
// any launch, NodeJoinReady=False; or at the first refusal, Registered=False
// NodeRoleNotAuthorized) and does not launch in a loop. The administrator then creates the EC2_LINUX
// access entry through the EKS API (the other fix of scenarios_test.go's aws-auth edit), and the
// pods run with nothing restarted.
func TestJoinS1AccessEntryFix(t *testing.T) {
	const roleARN = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	stack := startWorld(t, "s1-unmapped-node-role")
	pid := stack.Controller.Pid()
	applied := applyScenario(t, stack, "s1-unmapped-node-role")
	var preflight bool
	eventually(t, diagnoseWithin, "S1 diagnosed with the node role and the fix", func(ctx context.Context) (bool, string, error) {
		cond, err := condition(ctx, stack, "default", awsv1.ConditionTypeNodeJoinReady)
		if err != nil {
			return false, "", err
		}
		if cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, roleARN) &&
			strings.Contains(cond.Message, "system:node:{{EC2PrivateDNSName}}") {
			preflight = true
			return true, "", nil
		}
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims); err != nil {
			return false, "", err
		}
		for _, nc := range claims.Items {
			reg := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeRegistered)
			if reg != nil && reg.Status == metav1.ConditionFalse && reg.Reason == "NodeRoleNotAuthorized" && strings.Contains(reg.Message, "KarpenterNodeRole-demo") {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("NodeJoinReady %+v, %d NodeClaims", cond, len(claims.Items)), nil
	})
	t.Logf("S1 diagnosed %.1fs after the manifests were applied (before any launch: %t)", time.Since(applied).Seconds(), preflight)

	// No launch loop for a certain cause: none at all when the class says so before launching;
	// at most the first launch and one more when the refusal told.
	if preflight {
		noLaunchFor(t, stack, 15*time.Second)
	} else {
		first, err := stack.Instances(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "at most one relaunch", func(ctx context.Context) (bool, string, error) {
			all, err := stack.Instances(ctx)
			return len(all) <= 2*len(first), fmt.Sprintf("%d instances after %d", len(all), len(first)), err
		})
	}

	// The fix, as the administrator applies it: an EC2_LINUX access entry for the node role.
	fixed := time.Now()
	if _, err := eks.NewFromConfig(adminConfig(stack)).CreateAccessEntry(t.Context(), &eks.CreateAccessEntryInput{
		ClusterName: aws.String("demo"), PrincipalArn: aws.String(roleARN), Type: aws.String("EC2_LINUX"),
	}); err != nil {
		t.Fatalf("creating the access entry as the administrator: %v", err)
	}
	podsRunning(t, stack, runWithin, 2, "inflate")
	t.Logf("S1: inflate's pods Running %.1fs after the access entry was created", time.Since(fixed).Seconds())
	checkControllerNotRestarted(t, stack, pid)
	for _, i := range checkEveryClaimJoined(t, stack) {
		if i.InstanceType != "t2.small" && i.InstanceType != "t2.medium" {
			t.Errorf("instance %s is a %s, outside the NodePool's types", i.ID, i.InstanceType)
		}
	}
}

// TestJoinS2FixedUserData: S2's single-word --kubelet-extra-args= is diagnosed before any launch,
// quoting the line and giving the corrected one, and nothing is launched. The operator applies
// the manifest with the two-word form (inner quotes kept, which systemd strips) and the pods run.
func TestJoinS2FixedUserData(t *testing.T) {
	const (
		broken  = `--kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`
		twoWord = `--kubelet-extra-args '--register-with-taints="karpenter.sh/unregistered:NoExecute"'`
	)
	stack := startWorld(t, "s2-custom-ami-taint-args")
	pid := stack.Controller.Pid()
	applied := applyScenario(t, stack, "s2-custom-ami-taint-args")
	var said string
	eventually(t, diagnoseWithin, "S2's userData line diagnosed with its corrected line", func(ctx context.Context) (bool, string, error) {
		var seen []string
		for _, kind := range []string{awsv1.ConditionTypeNodeJoinReady, awsv1.ConditionTypeValidationSucceeded} {
			cond, err := condition(ctx, stack, "custom-ami", kind)
			if err != nil {
				return false, "", err
			}
			if cond == nil {
				continue
			}
			seen = append(seen, fmt.Sprintf("%s=%s %s: %s", kind, cond.Status, cond.Reason, cond.Message))
			if cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, broken) &&
				strings.Contains(cond.Message, "--kubelet-extra-args '--register-with-taints=") {
				said = seen[len(seen)-1]
				return true, "", nil
			}
		}
		return false, strings.Join(seen, "\n"), nil
	})
	t.Logf("S2 diagnosed %.1fs after the manifests were applied: %s", time.Since(applied).Seconds(), said)
	noLaunchFor(t, stack, 10*time.Second)

	// The fix, as the operator applies it: the class's manifest with the two-word form.
	var nc awsv1.EC2NodeClass
	if err := stack.Client.Get(t.Context(), client.ObjectKey{Name: "custom-ami"}, &nc); err != nil {
		t.Fatal(err)
	}
	userData := strings.Replace(aws.ToString(nc.Spec.UserData), broken, twoWord, 1)
	if userData == aws.ToString(nc.Spec.UserData) {
		t.Fatalf("the scenario's userData has no %s", broken)
	}
	// The emulated instance's shell does not run the AWS CLI: put in what the userData's
	// `$(aws eks describe-cluster ...)` prints on a real instance, as the field's instances got it.
	cluster, err := eks.NewFromConfig(adminConfig(stack)).DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	userData = strings.Replace(userData, `$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.certificateAuthority.data' --output text)`,
		aws.ToString(cluster.Cluster.CertificateAuthority.Data), 1)
	userData = strings.Replace(userData, `$(aws eks describe-cluster --name "$CLUSTER_NAME" --query 'cluster.endpoint' --output text)`,
		aws.ToString(cluster.Cluster.Endpoint), 1)
	if strings.Contains(userData, "$(aws ") {
		t.Fatalf("the class's userData calls the AWS CLI in a way this test does not stand in for:\n%s", userData)
	}
	nc.Spec.UserData = &userData
	fixed := time.Now()
	if err := stack.Client.Update(t.Context(), &nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var nc awsv1.EC2NodeClass
		_ = stack.Client.Get(context.Background(), client.ObjectKey{Name: "custom-ami"}, &nc)
		t.Logf("EC2NodeClass custom-ami: %+v", nc.Status.Conditions)
		var np v1.NodePool
		_ = stack.Client.Get(context.Background(), client.ObjectKey{Name: "default"}, &np)
		t.Logf("NodePool default: %+v", np.Status.Conditions)
		var claims v1.NodeClaimList
		_ = stack.Client.List(context.Background(), &claims)
		for _, c := range claims.Items {
			t.Logf("NodeClaim %s: %+v", c.Name, c.Status.Conditions)
		}
	})
	podsRunning(t, stack, runWithin, 3, "inflate")
	t.Logf("S2: inflate's pods Running %.1fs after the fixed class was applied", time.Since(fixed).Seconds())
	checkControllerNotRestarted(t, stack, pid)
	checkEveryClaimJoined(t, stack)
}

// TestJoinS3AgentTaint: S3's AL2023 NodeConfig asks for Cilium's taint with
// --register-with-taints. It just works: the nodes register with both Joiner's
// unregistered taint (unioned, so they register) and Cilium's (the operator's own, kept), the
// operator is advised to declare Cilium's taint in startupTaints, Cilium's agent (the emulator's
// stand-in) removes its taint, and the pods run; no NodeClaim fails or is replaced.
func TestJoinS3AgentTaint(t *testing.T) {
	stack := startWorld(t, "s3-al2023-userdata-taint-override")
	applied := applyScenario(t, stack, "s3-al2023-userdata-taint-override")
	eventually(t, diagnoseWithin, "advice to declare Cilium's taint in startupTaints", func(ctx context.Context) (bool, string, error) {
		cond, err := condition(ctx, stack, "default", awsv1.ConditionTypeNodeJoinReady)
		if err != nil || cond == nil {
			return false, "no NodeJoinReady", err
		}
		return cond.Status != metav1.ConditionFalse && strings.Contains(cond.Message, "node.cilium.io/agent-not-ready") &&
			strings.Contains(cond.Message, "startupTaints"), fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message), nil
	})
	t.Logf("S3 advice on the class %.1fs after the manifests were applied", time.Since(applied).Seconds())

	// Cilium's taint is seen on a Node (the operator's flag kept), then its agent removes it.
	ciliumSeen := map[string]bool{}
	eventually(t, runWithin, "inflate's pods Running on nodes that carried Cilium's taint", func(ctx context.Context) (bool, string, error) {
		var nodes corev1.NodeList
		if err := stack.Client.List(ctx, &nodes); err != nil {
			return false, "", err
		}
		for _, n := range nodes.Items {
			for _, taint := range n.Spec.Taints {
				if taint.Key == "node.cilium.io/agent-not-ready" && taint.Value == "true" && taint.Effect == corev1.TaintEffectNoExecute {
					ciliumSeen[n.Name] = true
				}
			}
		}
		_, running, _, err := podCounts(ctx, stack.Client, "default")
		return running == 3 && len(ciliumSeen) > 0, fmt.Sprintf("%d running, Cilium's taint seen on %v", running, ciliumSeen), err
	})
	t.Logf("S3: inflate's pods Running %.1fs after the manifests were applied", time.Since(applied).Seconds())
	checkEveryClaimJoined(t, stack)
}

// TestJoinS4PolicyFix: S4's controller policy refuses `batch` (iam:PassRole on BatchNodeRole-demo)
// and `tenant-a` (no cost-center request tag); each class says so, with the action and resource,
// within 60s, `default`'s pod runs meanwhile, and the refused classes launch nothing. The
// administrator adds the PassRole statement with iam:PutRolePolicy and the operator adds the
// cost-center tag to tenant-a's manifest; both classes turn Ready within 60s and their pods run.
func TestJoinS4PolicyFix(t *testing.T) {
	stack := startWorld(t, "s4-runinstances-auth-check")
	pid := stack.Controller.Pid()
	applied := applyScenario(t, stack, "s4-runinstances-auth-check")
	refused := map[string]string{
		"batch":    "iam:PassRole on arn:aws:iam::111122223333:role/BatchNodeRole-demo",
		"tenant-a": "ec2:RunInstances on arn:aws:ec2:us-west-2:111122223333:instance/*",
	}
	eventually(t, diagnoseWithin, "batch and tenant-a refused with the denied action and resource", func(ctx context.Context) (bool, string, error) {
		var seen []string
		done := true
		for class, text := range refused {
			cond, err := condition(ctx, stack, class, awsv1.ConditionTypeValidationSucceeded)
			if err != nil {
				return false, "", err
			}
			if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, text) {
				done = false
			}
			seen = append(seen, fmt.Sprintf("%s: %+v", class, cond))
		}
		return done, strings.Join(seen, "\n"), nil
	})
	t.Logf("S4 diagnosed %.1fs after the manifests were applied", time.Since(applied).Seconds())
	podsRunning(t, stack, runWithin, 1, "inflate")
	instances, err := stack.Instances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range instances {
		if pool := i.Tags[v1.NodePoolLabelKey]; pool != "default" {
			t.Errorf("instance %s launched for NodePool %q, whose class is refused", i.ID, pool)
		}
	}

	// The fixes: the administrator lets the controller pass BatchNodeRole-demo ...
	cfg := adminConfig(stack)
	iamc := iam.NewFromConfig(cfg)
	const role, policyName = "KarpenterControllerRole-demo", "JoinerControllerPolicy"
	got, err := iamc.GetRolePolicy(t.Context(), &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(policyName)})
	if err != nil {
		t.Fatalf("reading the controller's policy as the administrator: %v", err)
	}
	raw, err := url.QueryUnescape(aws.ToString(got.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("decoding the controller's policy: %v\n%s", err, raw)
	}
	doc["Statement"] = append(doc["Statement"].([]any), map[string]any{
		"Sid": "AllowPassingBatchNodeRole", "Effect": "Allow", "Action": "iam:PassRole",
		"Resource":  "arn:aws:iam::111122223333:role/BatchNodeRole-demo",
		"Condition": map[string]any{"StringEqualsIfExists": map[string]any{"iam:PassedToService": "ec2.amazonaws.com"}},
	})
	policy, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	fixed := time.Now()
	if _, err := iamc.PutRolePolicy(t.Context(), &iam.PutRolePolicyInput{
		RoleName: aws.String(role), PolicyName: aws.String(policyName), PolicyDocument: aws.String(string(policy)),
	}); err != nil {
		t.Fatalf("putting the fixed policy as the administrator: %v", err)
	}
	// ... and the operator tags tenant-a's instances with a cost-center.
	var tenant awsv1.EC2NodeClass
	if err := stack.Client.Get(t.Context(), client.ObjectKey{Name: "tenant-a"}, &tenant); err != nil {
		t.Fatal(err)
	}
	tenant.Spec.Tags["cost-center"] = "tenant-a"
	if err := stack.Client.Update(t.Context(), &tenant); err != nil {
		t.Fatal(err)
	}
	eventually(t, diagnoseWithin, "batch and tenant-a Ready", func(ctx context.Context) (bool, string, error) {
		var seen []string
		done := true
		for class := range refused {
			cond, err := condition(ctx, stack, class, awsv1.ConditionTypeReady)
			if err != nil {
				return false, "", err
			}
			if cond == nil || cond.Status != metav1.ConditionTrue {
				done = false
				seen = append(seen, fmt.Sprintf("%s: %+v", class, cond))
			}
		}
		return done, strings.Join(seen, "\n"), nil
	})
	t.Logf("S4: batch and tenant-a Ready %.1fs after the fixes", time.Since(fixed).Seconds())
	podsRunning(t, stack, runWithin, 3, "batch-worker", "tenant-a-app")
	t.Logf("S4: batch-worker's and tenant-a-app's pods Running %.1fs after the fixes", time.Since(fixed).Seconds())
	checkControllerNotRestarted(t, stack, pid)
	checkEveryClaimJoined(t, stack)
}

// TestJoinS5Arm64: S5's arm64 NodePool just works: the pods of both Deployments (nodeSelector
// and the same constraint as required nodeAffinity) run on t4g nodes, every instance booted an
// arm64 AMI, and no NodeClaim failed or was replaced.
func TestJoinS5Arm64(t *testing.T) {
	stack := startWorld(t, "s5-arm64-nodepool")
	applied := applyScenario(t, stack, "s5-arm64-nodepool")
	podsRunning(t, stack, runWithin, 4, "inflate", "inflate-affinity")
	t.Logf("S5: all 4 pods Running %.1fs after the manifests were applied", time.Since(applied).Seconds())
	instances := checkEveryClaimJoined(t, stack)
	if len(instances) == 0 {
		t.Fatal("no instances")
	}
	ec2c := ec2.NewFromConfig(adminConfig(stack))
	var ids []string
	for _, i := range instances {
		ids = append(ids, i.ID)
		if !strings.HasPrefix(i.InstanceType, "t4g.") {
			t.Errorf("instance %s is a %s, outside the NodePool's t4g family", i.ID, i.InstanceType)
		}
	}
	out, err := ec2c.DescribeInstances(t.Context(), &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			img, err := ec2c.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{aws.ToString(i.ImageId)}})
			if err != nil || len(img.Images) != 1 {
				t.Fatalf("image %s of %s: %v", aws.ToString(i.ImageId), aws.ToString(i.InstanceId), err)
			}
			if arch := img.Images[0].Architecture; arch != "arm64" {
				t.Errorf("instance %s (%s) booted AMI %s of architecture %s", aws.ToString(i.InstanceId), i.InstanceType, aws.ToString(i.ImageId), arch)
			}
		}
	}
}
