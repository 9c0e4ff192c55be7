package testenv

import (
	"fmt"
	"strings"
	"sync"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ events.EventRecorder = (*Recorder)(nil)

// Recorder is an events.EventRecorder that keeps every event as "name type reason note", name
// being the regarding object's, for tests to assert on. It is safe for concurrent use; the zero
// value is ready.
type Recorder struct {
	mu     sync.Mutex
	events []string
}

// Eventf records the event.
func (r *Recorder) Eventf(regarding, _ kruntime.Object, eventType, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetName()
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s", name, eventType, reason, fmt.Sprintf(note, args...)))
}

// Events returns the events recorded so far, oldest first.
func (r *Recorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// Find returns the first event of the named object with the type and reason, or "".
func (r *Recorder) Find(name, eventType, reason string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.HasPrefix(e, name+" "+eventType+" "+reason+" ") {
			return e
		}
	}
	return ""
}
