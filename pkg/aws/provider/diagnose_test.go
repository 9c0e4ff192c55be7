package provider

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// TestDiagnoseJoin launches through the provider, lets the emulator boot the instance, and reads
// the diagnosis through DescribeInstances and GetConsoleOutput with the real SDK: an unmapped node
// role (401), a role mapped without system:nodes (403) and an invalid taint in the kubelet's flags
// are certain; a node that joined shows no error; a console the controller may not read is
// uncertain and says so; a terminated instance is certain and only the instance's.
func TestDiagnoseJoin(t *testing.T) {
	tests := []struct {
		name   string
		unmap  bool
		delete bool
		// denyConsole takes ec2:GetConsoleOutput from the controller's policy.
		denyConsole bool
		// mapRoles is kube-system/aws-auth's mapRoles (the ConfigMap exists when set).
		mapRoles string
		// userData and alias are the EC2NodeClass's (AL2023 by default).
		userData, alias string
		reason          string
		message         string
		evidence        string
	}{
		// The fix names the role read from the instance's profile and the cluster, ready to run.
		{name: "node role mapped nowhere", unmap: true, reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			message: "rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo, username: system:node:{{EC2PrivateDNSName}}", evidence: `err="Unauthorized"`},
		{name: "node role mapped nowhere, the EC2_LINUX access entry to create", unmap: true, reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			message: "--cluster-name demo --principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-demo --type EC2_LINUX", evidence: `err="Unauthorized"`},
		{name: "joined", message: "shows no error"},
		{name: "node role mapped without system:nodes", unmap: true,
			mapRoles: "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n  username: node\n  groups: [system:bootstrappers]\n",
			reason:   cloudprovider.ReasonNodeRoleNotAuthorized, message: "403 Forbidden", evidence: "cannot create resource"},
		{name: "invalid taint in bootstrap.sh's kubelet extra args", alias: "al2@latest",
			userData: "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered=:NoExecute,team=a:NoScedule'\n",
			reason:   cloudprovider.ReasonInvalidKubeletArguments, message: "NoScedule", evidence: `"command failed"`},
		{name: "console not readable", unmap: true, denyConsole: true, message: "add ec2:GetConsoleOutput to the controller's policy"},
		{name: "terminated", delete: true, reason: cloudprovider.ReasonInstanceTerminated, message: "stopped before its Node joined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvAnyStatus(t, func(nc *awsv1.EC2NodeClass) {
				if tt.userData != "" {
					nc.Spec.UserData = &tt.userData
				}
				if tt.alias != "" {
					nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: tt.alias}}
				}
			})
			readyAsOnceResolved(t, e, tt.reason == cloudprovider.ReasonInvalidKubeletArguments)
			if tt.unmap {
				if err := e.state.Update(func(w *state.World) error {
					r := w.Regions["us-west-2"]
					clear(r.Clusters[state.DefaultSeed().ClusterName].AccessEntries)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := e.provider.Create(t.Context(), nodeClaim("diag", req(corev1.LabelInstanceTypeStable, v1.NodeSelectorOpIn, "m5.large")))
			if err != nil {
				t.Fatal(err)
			}
			kubelets := kubelets.New(e.state, e.clock, kubelets.Options{APIServer: &boot.FakeAPIServer{MapRoles: tt.mapRoles, ConfigMapFound: tt.mapRoles != ""}})
			e.clock.Step(state.PendingFor + state.BootDelay)
			if err := kubelets.Sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			if tt.denyConsole {
				e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},`+
					`{"Effect":"Deny","Action":"ec2:GetConsoleOutput","Resource":"*"}]}`)
			}
			if tt.delete {
				if err := e.provider.Delete(t.Context(), got); err != nil {
					t.Fatal(err)
				}
			}
			d, err := e.provider.DiagnoseJoin(t.Context(), got)
			if err != nil {
				t.Fatal(err)
			}
			if d.Certain != (tt.reason != "") || d.Reason != tt.reason {
				t.Errorf("DiagnoseJoin = certain %v reason %q, want %q; message %q evidence %q", d.Certain, d.Reason, tt.reason, d.Message, d.Evidence)
			}
			if !strings.Contains(d.Message, tt.message) || !strings.Contains(d.Evidence, tt.evidence) {
				t.Errorf("DiagnoseJoin message %q evidence %q, want %q and %q", d.Message, d.Evidence, tt.message, tt.evidence)
			}
			if d.InstanceOnly != tt.delete {
				t.Errorf("InstanceOnly = %v, want %v", d.InstanceOnly, tt.delete)
			}
		})
	}
}

// readyAsOnceResolved requires e's node class Ready; with refusedByPreflight, it requires the
// preflight to refuse the class (NodeJoinReady=False InvalidKubeletArguments) before any launch
// and marks it Ready as it once was: the runtime diagnosis is for an instance launched all the
// same (by a controller without the check, or from a class changed since).
func readyAsOnceResolved(t *testing.T, e *env, refusedByPreflight bool) {
	t.Helper()
	if !refusedByPreflight {
		if !meta.IsStatusConditionTrue(e.nodeClass.Status.Conditions, awsv1.ConditionTypeReady) {
			t.Fatalf("EC2NodeClass not Ready: %+v", e.nodeClass.Status.Conditions)
		}
		return
	}
	if c := meta.FindStatusCondition(e.nodeClass.Status.Conditions, awsv1.ConditionTypeNodeJoinReady); c == nil || c.Reason != cloudprovider.ReasonInvalidKubeletArguments {
		t.Fatalf("NodeJoinReady = %+v, want False %s before any launch", c, cloudprovider.ReasonInvalidKubeletArguments)
	}
	meta.SetStatusCondition(&e.nodeClass.Status.Conditions, metav1.Condition{Type: awsv1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready"})
	if err := e.kube.Status().Update(t.Context(), e.nodeClass); err != nil {
		t.Fatal(err)
	}
}

// TestDiagnosesShareOneList: the join diagnoses of many NodeClaims waiting for their Nodes, made
// every 15 seconds each, read the instances' state from one List younger than
// instance.DiagnosisMaxAge (and from the launch itself right after it), not with one
// DescribeInstances each; each running instance's console is still read.
func TestDiagnosesShareOneList(t *testing.T) {
	e := newEnv(t)
	const n = 5
	var claims []*v1.NodeClaim
	for i := range n {
		claim, err := e.provider.Create(t.Context(), nodeClaim(fmt.Sprintf("waiting-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, claim)
	}
	calls := func() map[string]int {
		out := map[string]int{}
		e.state.View(func(w *state.World) { maps.Copy(out, w.Calls) })
		return out
	}
	for _, tt := range []struct {
		step                time.Duration
		describes, consoles int
		message             string
	}{
		{step: 0, describes: 0, consoles: 0, message: "still pending"},
		{step: instance.DiagnosisMaxAge + time.Second, describes: 1, consoles: n, message: "is running"},
	} {
		e.clock.Step(tt.step)
		before := calls()
		for _, claim := range claims {
			d, err := e.provider.DiagnoseJoin(t.Context(), claim)
			if err != nil || !strings.Contains(d.Message, tt.message) {
				t.Errorf("DiagnoseJoin %s after %v = %+v, %v; want a message saying %q", claim.Name, tt.step, d, err, tt.message)
			}
		}
		after := calls()
		if got := after["DescribeInstances"] - before["DescribeInstances"]; got != tt.describes {
			t.Errorf("%d diagnoses %v after launch made %d DescribeInstances calls, want %d", n, tt.step, got, tt.describes)
		}
		if got := after["GetConsoleOutput"] - before["GetConsoleOutput"]; got != tt.consoles {
			t.Errorf("%d diagnoses %v after launch read %d consoles, want %d", n, tt.step, got, tt.consoles)
		}
	}
}
