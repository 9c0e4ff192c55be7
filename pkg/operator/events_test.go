package operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// startRecorder returns a recorder writing to a fake clientset, running until the test ends.
func startRecorder(t *testing.T, clk *clocktesting.FakeClock) (*eventRecorder, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	r := newEventRecorder(client.EventsV1(), scheme, clk, logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r, client
}

// waitForEvents polls until the namespace's Events satisfy ok, and returns them.
func waitForEvents(t *testing.T, client *fake.Clientset, namespace string, ok func([]eventsv1.Event) bool) []eventsv1.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := client.EventsV1().Events(namespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ok(list.Items) {
			return list.Items
		}
		if time.Now().After(deadline) {
			if len(list.Items) > 3 {
				list.Items = list.Items[:3]
			}
			t.Fatalf("events in %s never as wanted; last: %d events, the first %+v", namespace, len(list.Items), list.Items)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", UID: types.UID("uid-" + name)}}
}

func TestEventRecorderWritesTheEventClientGoWould(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r, client := startRecorder(t, clk)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "uid-node"}}
	r.ForController("karpenter").Eventf(pod("web"), node, corev1.EventTypeNormal, "Nominated", "Nominate", "Pod should schedule on %s", "node-a")
	// A cluster-scoped object's events go to the default namespace.
	r.ForController("karpenter").AnnotatedEventf(node, nil, map[string]string{"a": "b"}, corev1.EventTypeWarning, "Terminated", "Terminate", "Node drained")

	got := waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool { return len(e) == 1 })
	hostname := r.hostname
	want := eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web.%x", clk.Now().UnixNano()), Namespace: "apps"},
		EventTime:  metav1.NewMicroTime(clk.Now()), ReportingController: "karpenter", ReportingInstance: "karpenter-" + hostname,
		Action: "Nominate", Reason: "Nominated", Note: "Pod should schedule on node-a", Type: corev1.EventTypeNormal,
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "apps", Name: "web", UID: "uid-web"},
		Related:   &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "node-a", UID: "uid-node"},
	}
	if diff := cmp.Diff(want, got[0], cmpopts.IgnoreTypes(metav1.TypeMeta{}), cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ManagedFields")); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	got = waitForEvents(t, client, metav1.NamespaceDefault, func(e []eventsv1.Event) bool { return len(e) == 1 })
	if got[0].Reason != "Terminated" || got[0].Type != corev1.EventTypeWarning || got[0].Annotations["a"] != "b" || got[0].Related != nil {
		t.Errorf("node event = %+v, want a Warning Terminated with annotation a=b and no related object", got[0])
	}
}

func TestEventRecorderCountsRepeatsIntoOneSeries(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r, client := startRecorder(t, clk)
	rec := r.ForController("karpenter")
	emit := func(note string) {
		rec.Eventf(pod("web"), nil, corev1.EventTypeWarning, "FailedScheduling", "Schedule", "%s", note)
	}
	emit("no nodepool fits")
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool { return len(e) == 1 })
	for range 2 {
		clk.Step(time.Minute)
		// A repeat is the same event whatever its note, as client-go has it.
		emit("no nodepool fits, again")
	}
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool {
		return len(e) == 1 && e[0].Series != nil && e[0].Series.Count == 3 && e[0].Series.LastObservedTime.Time.Equal(clk.Now())
	})

	// Expired on the server: the next repeat writes it again, with the count.
	if err := client.EventsV1().Events("apps").DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Minute)
	emit("no nodepool fits")
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool {
		return len(e) == 1 && e[0].Series != nil && e[0].Series.Count == 4 && e[0].Reason == "FailedScheduling"
	})

	// Past the series window a repeat is a new Event.
	clk.Step(seriesWindow)
	emit("no nodepool fits")
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool { return len(e) == 2 })
}

// TestEventRecorderMemoryIsBounded: client-go's events broadcaster keeps every event it sent
// for minutes, tens of MiB at thousands of pods; this recorder remembers at most its bound of
// keys (recentEvents, 100 here) and no written Event, and still writes every event.
func TestEventRecorderMemoryIsBounded(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r, client := startRecorder(t, clk)
	r.remember = 100
	n := r.remember + 50
	for i := range n {
		r.ForController("karpenter").Eventf(pod(fmt.Sprintf("web-%d", i)), nil, corev1.EventTypeNormal, "Nominated", "Nominate", "Pod should schedule")
	}
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool { return len(e) == n })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recent.Len() != r.remember || len(r.byKey) != r.remember {
		t.Errorf("recorder remembers %d events (%d keys), want %d", r.recent.Len(), len(r.byKey), r.remember)
	}
	for e := r.recent.Front(); e != nil; e = e.Next() {
		if s := e.Value.(*eventSeries); s.event != nil {
			t.Fatalf("recorder still holds written event %s", s.event.Name)
		}
	}
}

// RecorderIsBounded tells the operator's tests whether r is the operator's recorder for
// controller.
func RecorderIsBounded(r any, controller string) bool {
	rec, ok := r.(*controllerRecorder)
	return ok && rec.controller == controller
}

// TestEventRecorderCutsLongNotes: a note over the API's 1 KiB limit is cut at a character
// boundary, not refused by the API server.
func TestEventRecorderCutsLongNotes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r, client := startRecorder(t, clk)
	long := strings.Repeat("é", maxNoteBytes) // two bytes each
	r.ForController("karpenter").Eventf(pod("web"), nil, corev1.EventTypeWarning, "FailedScheduling", "Schedule", "x%s", long)
	got := waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool { return len(e) == 1 })
	if note := got[0].Note; len(note) > maxNoteBytes || !utf8.ValidString(note) || !strings.HasPrefix(note, "xé") {
		t.Errorf("note of %d bytes (valid UTF-8: %t), want at most %d bytes of the message's start", len(note), utf8.ValidString(note), maxNoteBytes)
	}
}

// TestEventRecorderWritesOneSeriesAtATime: repeats that come while the series is being written
// are counted and written after it, never beside it (a patch racing the create would find no
// Event and create a second one).
func TestEventRecorderWritesOneSeriesAtATime(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r, client := startRecorder(t, clk)
	// The API server's round trip: the repeats come while the Event is being created.
	client.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		time.Sleep(50 * time.Millisecond)
		return false, nil, nil
	})
	const repeats = 200
	for range repeats {
		r.ForController("karpenter").Eventf(pod("web"), nil, corev1.EventTypeWarning, "FailedScheduling", "Schedule", "no nodepool fits")
	}
	waitForEvents(t, client, "apps", func(e []eventsv1.Event) bool {
		return len(e) == 1 && e[0].Series != nil && e[0].Series.Count == repeats
	})
	// Nothing more is on its way once the last write ends.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		queued := r.recent.Front().Value.(*eventSeries).queued
		r.mu.Unlock()
		if !queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("series still queued after its last count was written")
		}
	}
	if list, err := client.EventsV1().Events("apps").List(t.Context(), metav1.ListOptions{}); err != nil || len(list.Items) != 1 {
		t.Errorf("%d events, want 1 (err %v)", len(list.Items), err)
	}
}
