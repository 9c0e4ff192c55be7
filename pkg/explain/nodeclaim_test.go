package explain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/explain"
)

func TestNodeClaim(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	cond := func(typ string, status metav1.ConditionStatus, s int, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, LastTransitionTime: at(s), Reason: reason, Message: msg}
	}
	claim := func(conds ...metav1.Condition) *v1.NodeClaim {
		return &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "default-abc", UID: "u1", CreationTimestamp: at(0),
				Labels: map[string]string{v1.NodePoolLabelKey: "default", corev1.LabelInstanceTypeStable: "t3.small"}},
			Status: v1.NodeClaimStatus{ProviderID: "aws:///us-west-2a/i-0123", Conditions: conds},
		}
	}
	event := func(uid string, s int, typ, reason, note string) corev1.Event {
		return corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "NodeClaim", Name: "default-abc", UID: k8stypes.UID(uid)},
			EventTime: metav1.NewMicroTime(t0.Add(time.Duration(s) * time.Second)), Type: typ, Reason: reason, Message: note}
	}
	launched := cond(v1.ConditionTypeLaunched, metav1.ConditionTrue, 3, "Launched", "Instance aws:///us-west-2a/i-0123 launched")
	for _, tc := range []struct {
		name      string
		nc        *v1.NodeClaim
		node      *corev1.Node
		events    []corev1.Event
		diagnosis []string
		timeline  []string // "Type Status Reason"
		text      []string
	}{
		{
			name: "waiting for the node, with the reason the lifecycle set",
			nc: claim(launched, cond(v1.ConditionTypeRegistered, metav1.ConditionUnknown, 3, "NodeNotFound", "Waiting for a Node with providerID aws:///us-west-2a/i-0123 to join the cluster"),
				cond(v1.ConditionTypeInitialized, metav1.ConditionUnknown, 3, "AwaitingRegistration", "")),
			events: []corev1.Event{
				event("u1", 3, corev1.EventTypeNormal, "Launched", "Launched=True"),
				event("old", 1, corev1.EventTypeWarning, "RegistrationTimeout", "an earlier NodeClaim of the same name"),
			},
			diagnosis: []string{"Registered=Unknown NodeNotFound: Waiting for a Node with providerID aws:///us-west-2a/i-0123 to join the cluster"},
			timeline:  []string{"Created True ", "Launched True Launched", "Registered Unknown NodeNotFound", "Initialized Unknown AwaitingRegistration", "Ready (not reported) "},
			text:      []string{"NodeClaim default-abc (NodePool default)", "2026-11-25T12:00:03Z (+3s)", "Launched: Launched=True", "instance type: t3.small"},
		},
		{
			name: "a certain cause, and conditions the lifecycle does not own yet",
			nc: claim(launched, cond(v1.ConditionTypeRegistered, metav1.ConditionFalse, 40, "NodeRoleNotAuthorized", "map the role"),
				cond("Drifted", metav1.ConditionFalse, 5, "NotDrifted", "")),
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-0-1"},
				Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Message: "container runtime network not ready"}}}},
			diagnosis: []string{"Registered=False NodeRoleNotAuthorized: map the role", "Drifted=False NotDrifted: "},
			text:      []string{"node ip-10-0-0-1: Ready=False (container runtime network not ready), taints: node.kubernetes.io/not-ready:NoSchedule"},
			timeline:  []string{"Created True ", "Launched True Launched", "Registered False NodeRoleNotAuthorized", "Initialized (not reported) ", "Ready (not reported) ", "Drifted False NotDrifted"},
		},
		{
			name: "initialized",
			nc: claim(launched, cond(v1.ConditionTypeRegistered, metav1.ConditionTrue, 20, "Registered", ""),
				cond(v1.ConditionTypeInitialized, metav1.ConditionTrue, 30, "Initialized", ""), cond(v1.ConditionTypeReady, metav1.ConditionTrue, 30, "Ready", "")),
			diagnosis: []string{"Initialized: the node is ready and holds pods"},
			timeline:  []string{"Created True ", "Launched True Launched", "Registered True Registered", "Initialized True Initialized", "Ready True Ready"},
			text:      []string{"(+30s)"},
		},
		{
			name:      "gone, events left",
			events:    []corev1.Event{event("u0", 900, corev1.EventTypeWarning, "RegistrationTimeout", "NodeClaim did not register within 15m0s")},
			diagnosis: []string{"The NodeClaim no longer exists; the events below are what is left of it (events expire after an hour)"},
			text:      []string{"Warning RegistrationTimeout: NodeClaim did not register within 15m0s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := explain.NodeClaim("default-abc", tc.nc, tc.node, tc.events)
			if diff := cmp.Diff(tc.diagnosis, r.Diagnosis); diff != "" {
				t.Errorf("diagnosis (-want +got):\n%s", diff)
			}
			var timeline []string
			for _, s := range r.Timeline {
				timeline = append(timeline, s.Type+" "+s.Status+" "+s.Reason)
			}
			if diff := cmp.Diff(tc.timeline, timeline); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.text {
				if !strings.Contains(b.String(), s) {
					t.Errorf("report does not contain %q:\n%s", s, b.String())
				}
			}
			if strings.Contains(b.String(), "an earlier NodeClaim") {
				t.Errorf("report shows another NodeClaim's event:\n%s", b.String())
			}
		})
	}
}
