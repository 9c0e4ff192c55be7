package provider

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/internal/karpenterpolicy"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
	"github.com/joinerhq/joiner/pkg/aws/launchtemplate"
	"github.com/joinerhq/joiner/pkg/controllers/aws/interruption"
)

// beyondKarpenter are the actions Joiner's diagnostics call that Karpenter's documented policy
// does not grant (`joiner iam-policy` does): the EC2NodeClass join check's access-entry and role
// reads, decoding a denial, and reading a stuck node's console. Denied, they only make the
// diagnosis less precise; everything else must be allowed.
var beyondKarpenter = []string{"eks:ListAccessEntries", "eks:DescribeAccessEntry", "iam:GetRole", "sts:DecodeAuthorizationMessage", "ec2:GetConsoleOutput"}

// TestKarpenterDocumentedPolicy runs Joiner's whole AWS flow with Karpenter's documented
// controller policy (karpenterpolicy) as the controller role's only policy: resolving a
// spec.role EC2NodeClass (SSM, subnets, security groups, the instance profile created tagged and
// given the role, the validation dry runs), launching an on-demand and a Spot NodeClaim
// (launch templates, CreateFleet), terminating them, collecting the launch templates, reading
// and deleting an interruption message, reading prices, and deleting the instance profile. No
// call of the flow may be denied, and what it creates carries the tags Karpenter's would.
func TestKarpenterDocumentedPolicy(t *testing.T) {
	seed := state.DefaultSeed()
	doc, err := json.Marshal(karpenterpolicy.Document(karpenterpolicy.Options{
		ClusterName: seed.ClusterName, Region: "us-west-2", AccountID: awsemu.DefaultAccountID, NodeRole: seed.NodeRole,
	}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvUnder(t, string(doc), func(*awsv1.EC2NodeClass) {})
	if !meta.IsStatusConditionTrue(e.nodeClass.Status.Conditions, awsv1.ConditionTypeValidationSucceeded) {
		t.Errorf("validation under Karpenter's policy: %+v", meta.FindStatusCondition(e.nodeClass.Status.Conditions, awsv1.ConditionTypeValidationSucceeded))
	}
	profile := instanceprofile.Name(seed.ClusterName, "us-west-2", e.nodeClass)
	if e.nodeClass.Status.InstanceProfile != profile {
		t.Errorf("status.instanceProfile %q, want %q", e.nodeClass.Status.InstanceProfile, profile)
	}

	var claims []*v1.NodeClaim
	for _, capacityType := range []string{v1.CapacityTypeOnDemand, v1.CapacityTypeSpot} {
		claim, err := e.provider.Create(t.Context(), nodeClaim("general-"+capacityType,
			req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large"),
			req(v1.CapacityTypeLabelKey, v1.NodeSelectorOpIn, capacityType)))
		if err != nil {
			t.Fatalf("launching a %s NodeClaim: %v", capacityType, err)
		}
		claims = append(claims, claim)
	}
	checkLaunchTemplateTags(t, e)
	for _, claim := range claims {
		if err := e.provider.Delete(t.Context(), claim); err != nil {
			t.Errorf("terminating %s: %v", claim.Name, err)
		}
		if got := e.instance(instance.InstanceID(claim.Status.ProviderID)); got.State != state.InstanceShuttingDown && got.State != state.InstanceTerminated {
			t.Errorf("instance of %s is %s after Delete", claim.Name, got.State)
		}
	}

	e.clock.Step(launchtemplate.UnusedTTL + 1)
	templates := launchtemplate.NewProvider(e.clients.EC2, seed.ClusterName, e.clock)
	if deleted, err := templates.GarbageCollect(t.Context()); err != nil || len(deleted) != 2 {
		t.Errorf("collecting launch templates: deleted %q, %v", deleted, err)
	}

	readInterruptionQueue(t, e, seed.ClusterName)
	if err := e.provider.cfg.Prices.Refresh(t.Context()); err != nil {
		t.Errorf("reading prices: %v", err)
	}
	if err := instanceprofile.NewProvider(e.clients.IAM, seed.ClusterName, "us-west-2").Delete(t.Context(), e.nodeClass); err != nil {
		t.Errorf("deleting the instance profile: %v", err)
	}

	e.state.View(func(w *state.World) {
		controller := w.IAM.Roles[seed.ControllerRole].ARN
		for _, d := range w.IAM.Decisions {
			if d.Role == controller && !d.Allowed && !slices.Contains(beyondKarpenter, d.Action) {
				t.Errorf("Karpenter's policy denied %s on %s", d.Action, d.Resource)
			}
		}
	})
}

// checkLaunchTemplateTags fails the test unless there are two launch templates (on-demand and
// Spot), each, and the network interfaces of its launches, tagged as Karpenter's are.
func checkLaunchTemplateTags(t *testing.T, e *env) {
	t.Helper()
	e.state.View(func(w *state.World) {
		r := w.Regions["us-west-2"]
		if len(r.LaunchTemplates) != 2 {
			t.Errorf("%d launch templates, want one for each capacity type", len(r.LaunchTemplates))
		}
		for _, lt := range r.LaunchTemplates {
			for what, tags := range map[string]state.Tags{"launch template": lt.Tags, "its network interfaces": lt.Data.NetworkInterfaceTags} {
				for k, v := range map[string]string{"kubernetes.io/cluster/demo": "owned", awsv1.TagKeyNodePool: "general",
					awsv1.TagKeyEKSClusterName: "demo", awsv1.TagKeyNodeClass: "default"} {
					if tags[k] != v {
						t.Errorf("%s of %s: tag %s = %q, want %q", what, lt.Name, k, tags[k], v)
					}
				}
			}
		}
	})
}

// readInterruptionQueue sends an interruption message, as EventBridge would, and reads and
// deletes the queue's messages as the controller does.
func readInterruptionQueue(t *testing.T, e *env, name string) {
	t.Helper()
	// An interruption message, sent as EventBridge would, read and deleted by the controller.
	admin := e.emu.ConfigFor(t, e.emu.Region, authz.AdminAccessKey)
	queue := interruption.NewQueue(e.clients.SQS, name)
	url, err := queue.URL(t.Context())
	if err != nil {
		t.Fatalf("interruption queue URL: %v", err)
	}
	if _, err := sqs.NewFromConfig(admin).SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("{}")}); err != nil {
		t.Fatal(err)
	}
	// The queue also holds the terminations' state-change events.
	messages, err := queue.Receive(t.Context())
	if err != nil || len(messages) == 0 {
		t.Fatalf("receiving: %d messages, %v", len(messages), err)
	}
	for _, m := range messages {
		if err := queue.Delete(t.Context(), m); err != nil {
			t.Errorf("deleting a message: %v", err)
		}
	}
}
