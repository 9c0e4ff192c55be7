package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
	"github.com/joinerhq/joiner/pkg/manifest"
)

// startScenario starts the local stack on the field case's world file, as
// `joiner dev --world test/scenarios/CASE.world.yaml` does (no samples), then applies the case's
// manifests as `kubectl apply -f test/scenarios/CASE.yaml` would. The stack stops when the test
// ends.
func startScenario(t *testing.T, name string) *localstack.Stack {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	dir := filepath.Join("..", "scenarios")
	work := t.TempDir()
	var out bytes.Buffer
	stack, err := localstack.Start(ctx, localstack.Options{
		AssetsDir: programs.assets, WorkDir: work, Out: &out, World: filepath.Join(dir, name+".world.yaml"),
		EmulatorPath: programs.awsemu, EmulatorArgs: fastEmulator,
		JoinerPath: programs.joiner, ControllerArgs: []string{"--leader-elect=false", "--log-level", "debug"},
	})
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
	raw, err := os.ReadFile(filepath.Join(dir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := manifest.DecodeBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		if err := stack.Apply(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	return stack
}

// TestScenarioS1UnmappedNodeRole: on S1's world the instances launch and run, their kubelets are
// refused with 401 Unauthorized, and no Node registers.
func TestScenarioS1UnmappedNodeRole(t *testing.T) {
	stack := startScenario(t, "s1-unmapped-node-role")
	ctx := t.Context()
	var refused []localstack.Instance
	eventually(t, 2*time.Minute, "instances running whose kubelets are refused", func(ctx context.Context) (bool, string, error) {
		instances, err := stack.Instances(ctx)
		if err != nil {
			return false, "", err
		}
		refused = refused[:0]
		var states []string
		for _, i := range instances {
			states = append(states, fmt.Sprintf("%s %s %s %s", i.ID, i.InstanceType, i.State, i.BootReason))
			if i.State == "running" && i.BootReason == "Unauthorized" {
				refused = append(refused, i)
			}
		}
		return len(refused) > 0, strings.Join(states, "; "), nil
	})
	for _, i := range refused {
		if i.InstanceType != "t2.small" && i.InstanceType != "t2.medium" {
			t.Errorf("instance %s is a %s, outside the NodePool's types", i.ID, i.InstanceType)
		}
		console := strings.Join(i.Console, "\n")
		if !strings.Contains(console, `"Unable to register node with API server" err="Unauthorized"`) {
			t.Errorf("console of %s does not show the 401:\n%s", i.ID, console)
		}
	}
	var nodes corev1.NodeList
	if err := stack.Client.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 0 {
		t.Errorf("%d Nodes registered with an unmapped node role", len(nodes.Items))
	}
	var claims v1.NodeClaimList
	if err := stack.Client.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) == 0 {
		t.Fatal("no NodeClaims")
	}
	for _, c := range claims.Items {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeLaunched) || meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeRegistered) {
			t.Errorf("NodeClaim %s: want Launched and not Registered, got %+v", c.Name, c.Status.Conditions)
		}
	}
}

// TestScenarioS2CustomAMITaintArgs: on S2's world the custom AMI's bootstrap.sh drops the
// single-word --kubelet-extra-args=..., so the Node registers without
// karpenter.sh/unregistered:NoExecute and the NodeClaim says so.
func TestScenarioS2CustomAMITaintArgs(t *testing.T) {
	stack := startScenario(t, "s2-custom-ami-taint-args")
	var claim v1.NodeClaim
	eventually(t, 2*time.Minute, "a NodeClaim whose Node registered without the taint", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		if err := stack.Client.List(ctx, &claims); err != nil {
			return false, "", err
		}
		var seen []string
		for _, c := range claims.Items {
			cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionTypeRegistered)
			if cond != nil {
				seen = append(seen, c.Name+" "+string(cond.Status)+" "+cond.Reason)
				if cond.Status == metav1.ConditionFalse && cond.Reason == "UnregisteredTaintNotFound" {
					claim = c
					return true, "", nil
				}
			}
		}
		return false, strings.Join(seen, "; "), nil
	})
	var node corev1.Node
	if err := stack.Client.Get(t.Context(), client.ObjectKey{Name: claim.Status.NodeName}, &node); err != nil {
		t.Fatalf("Node %q of NodeClaim %s: %v", claim.Status.NodeName, claim.Name, err)
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == v1.UnregisteredTaintKey {
			t.Errorf("Node %s has %v", node.Name, taint)
		}
	}
	instances, err := stack.Instances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range instances {
		if i.NodeName == node.Name && !strings.Contains(strings.Join(i.Console, "\n"), "/etc/eks/bootstrap.sh demo") {
			t.Errorf("console of %s does not show the userData's bootstrap.sh call:\n%s", i.ID, strings.Join(i.Console, "\n"))
		}
	}
}

// TestScenarioS4RunInstancesAuthCheck: on S4's world the controller's policy lets `default`
// validate, and refuses `batch` (iam:PassRole on BatchNodeRole-demo) and `tenant-a` (the launch,
// for want of a cost-center tag).
func TestScenarioS4RunInstancesAuthCheck(t *testing.T) {
	stack := startScenario(t, "s4-runinstances-auth-check")
	want := map[string]struct {
		ok   bool
		text string
	}{
		"default":  {ok: true},
		"batch":    {text: "iam:PassRole"},
		"tenant-a": {text: "cost-center"},
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
		}
		return done, strings.Join(seen, "\n"), nil
	})
}
