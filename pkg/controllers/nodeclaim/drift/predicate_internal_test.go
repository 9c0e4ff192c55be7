package drift

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestDriftInputChanged: a NodeClaim update is looked at only when it changes what drift reads;
// the lifecycle's conditions and the pod events' lastPodEventTime are not.
func TestDriftInputChanged(t *testing.T) {
	base := func() *v1.NodeClaim {
		return &v1.NodeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1, Labels: map[string]string{v1.NodePoolLabelKey: "p"},
				Annotations: map[string]string{v1.NodePoolHashAnnotationKey: "1"}},
			Status: v1.NodeClaimStatus{ProviderID: "aws:///a/i-1"},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*v1.NodeClaim)
		want   bool
	}{
		{name: "conditions", change: func(nc *v1.NodeClaim) {
			nc.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeRegistered, Status: metav1.ConditionTrue}}
		}},
		{name: "lastPodEventTime", change: func(nc *v1.NodeClaim) { nc.Status.LastPodEventTime = metav1.Now() }},
		{name: "launched", change: func(nc *v1.NodeClaim) { nc.Status.ProviderID = "aws:///a/i-2" }, want: true},
		{name: "spec", change: func(nc *v1.NodeClaim) { nc.Generation = 2 }, want: true},
		{name: "label", change: func(nc *v1.NodeClaim) { nc.Labels["node.kubernetes.io/instance-type"] = "m7i.large" }, want: true},
		{name: "annotation", change: func(nc *v1.NodeClaim) { nc.Annotations[v1.NodePoolHashAnnotationKey] = "2" }, want: true},
		{name: "deleted", change: func(nc *v1.NodeClaim) { nc.DeletionTimestamp = &metav1.Time{} }, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base()
			tc.change(changed)
			if got := driftInputChanged().Update(event.UpdateEvent{ObjectOld: base(), ObjectNew: changed}); got != tc.want {
				t.Errorf("Update() = %v, want %v", got, tc.want)
			}
		})
	}
}
