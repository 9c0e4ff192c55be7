package operator

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

const (
	// recentEvents bounds how many distinct events the recorder remembers to count repeats
	// of as a series, about 400 bytes each. An event forgotten (the least recently seen go
	// first) only means its next repeat is a new Event, not a series: as many writes to the API
	// server, and one more Event object.
	recentEvents = 1024
	// queuedEvents bounds the writes waiting for the API server. The recorder's own client
	// writes at the operator's QPS (200 by default): thousands of events a batch drain in
	// seconds. Beyond it an event is dropped and logged, as client-go's core/v1 broadcaster
	// drops beyond its queue.
	queuedEvents = 8192
	// seriesWindow is how long after an event's last occurrence a repeat still counts into its
	// series (client-go's finishTime).
	seriesWindow = 6 * time.Minute
	// maxNoteBytes is the events.k8s.io/v1 limit on a note; longer notes are cut, not refused.
	maxNoteBytes = 1024
	// eventWriters is how many events are written at once: the writes wait on the API
	// server's round trip far more than on the client's rate limit. With one writer, a
	// 2,000-pod scale-up's events (a Nominated per pod, four or five per NodeClaim) queued up
	// by the thousand, a MiB per thousand; with four, a 5,000-pod one still queued about
	// 12 MiB at its peak.
	eventWriters = 16
	// drainTimeout bounds the writes of queued events once the operator stops.
	drainTimeout = 5 * time.Second
)

// eventRecorder records events.k8s.io/v1 Events as client-go's events broadcaster does, field
// for field (name, namespace, reporting controller and instance, type, reason, action, note,
// regarding, related, annotations), and counts repeats of one event (same type, reason,
// action, controller, regarding and related objects, whatever the note) into its series, but
// with bounded memory. client-go keeps every event it sent for six to twelve minutes to spot
// repeats: at thousands of pods (a Nominated event each) and NodeClaims that was tens of MiB of
// the heap, and one goroutine per event in flight. This recorder remembers the recentEvents
// most recent events, by key and Event name only, and writes from eventWriters goroutines
// through a bounded queue.
//
// Writes go through the recorder's own client, so that events never take the controllers'
// share of the client rate limit. Events are written only while Start runs; those recorded
// before wait in the queue.
type eventRecorder struct {
	client   eventsv1client.EventsGetter
	scheme   *runtime.Scheme
	clock    clock.PassiveClock
	hostname string
	log      logr.Logger
	queue    chan *eventSeries
	// remember is how many distinct events the recorder remembers: recentEvents but in tests.
	remember int

	mu sync.Mutex
	// recent holds *eventSeries, most recently seen first; byKey indexes it.
	recent *list.List
	byKey  map[eventKey]*list.Element
}

// eventKey is what makes two events one series, as client-go's events broadcaster decides it.
type eventKey struct {
	eventType, action, reason, reportingController, reportingInstance string
	regarding, related                                                corev1.ObjectReference
}

// eventSeries is one remembered event. Fields after key are guarded by eventRecorder.mu.
type eventSeries struct {
	key eventKey
	// event is the Event to create, set while it waits in the queue and cleared once written:
	// only the name and namespace of a written Event are kept.
	event           *eventsv1.Event
	name, namespace string
	count           int32
	lastObserved    time.Time
	// queued is set while the series waits in the queue or is being written: repeats
	// meanwhile only count. A write sends the count as it is then, and queues the series again
	// when repeats came during it, so that one series has one write at a time, in order.
	queued bool
}

func newEventRecorder(client eventsv1client.EventsGetter, scheme *runtime.Scheme, clk clock.PassiveClock, log logr.Logger) *eventRecorder {
	hostname, _ := os.Hostname()
	return &eventRecorder{
		client: client, scheme: scheme, clock: clk, hostname: hostname, log: log,
		queue: make(chan *eventSeries, queuedEvents), remember: recentEvents,
		recent: list.New(), byKey: map[eventKey]*list.Element{},
	}
}

// ForController returns a recorder whose events name controller as their reporting controller
// and controller-<hostname> as their reporting instance.
func (r *eventRecorder) ForController(controller string) recorder.EventRecorder {
	return &controllerRecorder{events: r, controller: controller, instance: controller + "-" + r.hostname}
}

// NeedLeaderElection is false: the recorder writes what any replica records.
func (r *eventRecorder) NeedLeaderElection() bool { return false }

// Start writes queued events with eventWriters writers until ctx is done, then for up to
// drainTimeout those still queued.
func (r *eventRecorder) Start(ctx context.Context) error {
	var writers sync.WaitGroup
	for range eventWriters {
		writers.Go(func() { r.writeUntilDone(ctx) })
	}
	writers.Wait()
	return nil
}

func (r *eventRecorder) writeUntilDone(ctx context.Context) {
	for {
		select {
		case s := <-r.queue:
			r.write(ctx, s)
		case <-ctx.Done():
			drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
			defer cancel()
			for {
				select {
				case s := <-r.queue:
					r.write(drain, s)
				default:
					return
				}
			}
		}
	}
}

// record remembers event and queues its write, or counts it into the series of the same key
// seen within seriesWindow.
func (r *eventRecorder) record(event *eventsv1.Event) {
	key := eventKey{
		eventType: event.Type, action: event.Action, reason: event.Reason,
		reportingController: event.ReportingController, reportingInstance: event.ReportingInstance,
		regarding: event.Regarding,
	}
	if event.Related != nil {
		key.related = *event.Related
	}
	now := event.EventTime.Time
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byKey[key]; ok {
		s := e.Value.(*eventSeries)
		if now.Sub(s.lastObserved) < seriesWindow {
			r.recent.MoveToFront(e)
			s.count++
			s.lastObserved = now
			r.enqueue(s)
			return
		}
		r.forget(e)
	}
	s := &eventSeries{key: key, event: event, name: event.Name, namespace: event.Namespace, count: 1, lastObserved: now}
	r.byKey[key] = r.recent.PushFront(s)
	for r.recent.Len() > r.remember {
		r.forget(r.recent.Back())
	}
	r.enqueue(s)
}

// enqueue queues s's write unless it is queued already; r.mu is held.
func (r *eventRecorder) enqueue(s *eventSeries) {
	if s.queued {
		return
	}
	select {
	case r.queue <- s:
		s.queued = true
	default:
		r.log.Info("Dropping event, too many waiting to be written", "reason", s.key.reason, "regarding", s.key.regarding.Name, "queued", queuedEvents)
	}
}

func (r *eventRecorder) forget(e *list.Element) {
	delete(r.byKey, e.Value.(*eventSeries).key)
	r.recent.Remove(e)
}

// write creates s's Event, or patches the series count of the Event written before; an Event
// gone from the server (expired) is created again with the count.
func (r *eventRecorder) write(ctx context.Context, s *eventSeries) {
	r.mu.Lock()
	event, name, namespace, count, last := s.event, s.name, s.namespace, s.count, s.lastObserved
	s.event = nil
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		s.queued = false
		if s.count != count {
			r.enqueue(s)
		}
	}()
	events := r.client.Events(namespace)
	if event != nil {
		if count > 1 {
			event.Series = &eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(last)}
		}
		if _, err := events.Create(ctx, event, metav1.CreateOptions{}); err != nil {
			r.log.Error(err, "Failed writing event", "reason", event.Reason, "regarding", event.Regarding.Name)
		}
		return
	}
	series := eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(last)}
	patch, err := json.Marshal(map[string]any{"series": series})
	if err != nil {
		r.log.Error(err, "Failed encoding event series", "event", name)
		return
	}
	_, err = events.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		err = r.recreate(ctx, s, &series)
	}
	if err != nil {
		r.log.Error(err, "Failed writing event series", "event", name, "count", count)
	}
}

// recreate creates anew the Event of a series whose Event expired on the server, under a new
// name, with the series count.
func (r *eventRecorder) recreate(ctx context.Context, s *eventSeries, series *eventsv1.EventSeries) error {
	event := r.newEvent(s.key, s.namespace, series.LastObservedTime.Time, "", nil)
	event.Series = series
	if _, err := r.client.Events(event.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating event again, %w", err)
	}
	r.mu.Lock()
	s.name = event.Name
	r.mu.Unlock()
	return nil
}

// newEvent builds the Event of key at now, as client-go's recorder does.
func (r *eventRecorder) newEvent(key eventKey, namespace string, now time.Time, note string, annotations map[string]string) *eventsv1.Event {
	event := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: util.GenerateEventName(key.regarding.Name, now.UnixNano()), Namespace: namespace, Annotations: annotations,
		},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: key.reportingController,
		ReportingInstance:   key.reportingInstance,
		Action:              key.action,
		Reason:              key.reason,
		Regarding:           key.regarding,
		Note:                note,
		Type:                key.eventType,
	}
	if key.related != (corev1.ObjectReference{}) {
		event.Related = new(key.related)
	}
	return event
}

// controllerRecorder is the recorder of one reporting controller.
type controllerRecorder struct {
	events               *eventRecorder
	controller, instance string
}

var _ recorder.EventRecorder = (*controllerRecorder)(nil)

func (c *controllerRecorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	c.AnnotatedEventf(regarding, related, nil, eventType, reason, action, note, args...)
}

// AnnotatedEventf records an event; one of an object with no reference (not in the scheme), of
// an unknown type or without a reason is logged and dropped, as client-go drops it.
func (c *controllerRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventType, reason, action, note string, args ...any) {
	message := fmt.Sprintf(note, args...)
	if len(message) > maxNoteBytes {
		end := maxNoteBytes
		for end > 0 && !utf8.RuneStart(message[end]) {
			end--
		}
		message = message[:end]
	}
	log := c.events.log.WithValues("type", eventType, "reason", reason, "message", message)
	ref, err := reference.GetReference(c.events.scheme, regarding)
	if err != nil {
		log.Error(err, "Dropping event of an object without a reference")
		return
	}
	if !util.ValidateEventType(eventType) {
		log.Error(nil, "Dropping event of an unknown type")
		return
	}
	key := eventKey{eventType: eventType, action: action, reason: reason, reportingController: c.controller, reportingInstance: c.instance, regarding: *ref}
	if related != nil {
		if rel, err := reference.GetReference(c.events.scheme, related); err == nil {
			key.related = *rel
		}
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	// A reference, not the ObjectReference itself: controller-runtime's log encoder reads an
	// object's metadata, which an ObjectReference has none of ("objectError" in every line).
	log.V(1).Info(message, "kind", ref.Kind, "object", klog.KRef(ref.Namespace, ref.Name))
	c.events.record(c.events.newEvent(key, namespace, c.events.clock.Now(), message, annotations))
}

// recordingManager is the manager whose GetEventRecorder returns the operator's recorder
// instead of controller-runtime's (client-go's events broadcaster, see eventRecorder).
// GetEventRecorderFor, the deprecated core/v1 recorder that leader election uses, is
// controller-runtime's still.
type recordingManager struct {
	manager.Manager
	events *eventRecorder
}

func (m *recordingManager) GetEventRecorder(name string) recorder.EventRecorder {
	return m.events.ForController(name)
}
