package termination_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/node/termination"
)

// startedAgo sets the pod's status.startTime to ago before the fake clock's now, as a kubelet
// that accepted it then would, and returns the time stored (to the second).
func startedAgo(t *testing.T, pod *corev1.Pod, ago time.Duration) time.Time {
	t.Helper()
	start := metav1.NewTime(fakeTime.Now().Add(-ago).Truncate(time.Second))
	pod.Status.StartTime = &start
	if err := env.Client.Status().Update(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	return start.Time
}

// TestTerminationDoNotDisruptDuration: a drain leaves a pod annotated with a duration alone
// until the pod is that old, counted from its start, and evicts it then; a pod whose value is
// neither "true" nor a duration is evicted at once, with an event naming the value.
func TestTerminationDoNotDisruptDuration(t *testing.T) {
	ctx := t.Context()
	nc, node := registeredNode(t, "dnd-duration", nil)
	// Other tests' termination timestamps follow the API server's clock; leave the fake clock
	// where it was.
	t.Cleanup(func() { fakeTime.SetTime(time.Now()) })
	pinned := newPod(t, "pinned-2h", node.Name, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "2h"}
	})
	start := startedAgo(t, pinned, time.Hour)
	bad := newPod(t, "bad-value", node.Name, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "two-hours"}
	})
	elapsed := newPod(t, "elapsed-30m", node.Name, func(p *corev1.Pod) {
		p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "30m"}
	})
	startedAgo(t, elapsed, time.Hour)
	if err := env.Client.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	until := start.Add(2 * time.Hour).UTC().Format(time.RFC3339)
	waitNodeClaim(t, nc.Name, func(nc *v1.NodeClaim) string {
		want := fmt.Sprintf("1 pods annotated %s, until %s", v1.DoNotDisruptAnnotationKey, until)
		if got := condition(nc, v1.ConditionTypeDrained); !strings.Contains(got, want) {
			return fmt.Sprintf("Drained = %q, want it to contain %q", got, want)
		}
		return ""
	})
	waitGone(t, bad)
	waitGone(t, elapsed)
	if e := events.Find("bad-value", corev1.EventTypeWarning, termination.ReasonInvalidDoNotDisrupt); !strings.Contains(e, `"two-hours"`) || !strings.Contains(e, v1.DoNotDisruptPodForms) {
		t.Errorf("event on the pod with an invalid value = %q, want it to name the value and the accepted forms", e)
	}
	if found, deleting := exists(t, pinned); !found || deleting {
		t.Fatalf("pod protected for 2h found=%v deleting=%v one hour after its start", found, deleting)
	}

	fakeTime.Step(time.Hour) // the pod is two hours old
	waitGone(t, pinned)
	waitGone(t, node)
	waitGone(t, nc)
}
