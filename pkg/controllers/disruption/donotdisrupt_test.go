package disruption_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/controllers/disruption"
)

// TestDoNotDisruptDuration: a pod annotated do-not-disrupt with a duration keeps its empty node
// (a DaemonSet pod, so the node is empty) until the pod is that old, counted from its start; the
// pass asks to run again when that protection ends. An invalid value protects nothing and is
// told once in an event naming it and the accepted forms; a Node or NodeClaim takes only
// "true".
func TestDoNotDisruptDuration(t *testing.T) {
	tests := []struct {
		name string
		// value is the pod's annotation ("" for a node-level case); started how long before now
		// the pod started (0: not started).
		value   string
		started time.Duration
		node    func(*v1.NodeClaim, *corev1.Node)
		// wantKept is how long the node is kept (0: deleted at once; -1: kept with no end);
		// wantEvent the invalid-value event's object, "" for none.
		wantKept  time.Duration
		wantEvent string
	}{
		{name: "dnd-duration-running", value: "4h", started: time.Hour, wantKept: 3 * time.Hour},
		{name: "dnd-duration-elapsed", value: "4h", started: 5 * time.Hour},
		{name: "dnd-duration-not-started", value: "30m", wantKept: -1},
		{name: "dnd-true", value: "true", started: time.Hour, wantKept: -1},
		{name: "dnd-invalid", value: "soon", started: time.Hour, wantEvent: "pod"},
		{name: "dnd-node-duration", node: func(_ *v1.NodeClaim, n *corev1.Node) {
			n.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "4h"}
		}, wantEvent: "node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newController(t)
			newNodePool(t, tt.name, nil)
			nc, node := newNode(t, tt.name, tt.name, tt.node)
			if tt.value != "" {
				newPod(t, tt.name, node.Name, func(p *corev1.Pod) {
					daemonSetOwned(p)
					p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: tt.value}
					if tt.started > 0 {
						start := metav1.NewTime(h.clock.Now().Add(-tt.started))
						p.Status.StartTime = &start
					}
				})
			}
			first, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantKept > 0 {
				// The start time is stored to the second.
				if d := first.RequeueAfter - tt.wantKept; d > 0 || d <= -time.Second {
					t.Errorf("RequeueAfter = %s, want the %s left of the protection", first.RequeueAfter, tt.wantKept)
				}
			}
			h.clock.Step(disruption.ValidationPeriod)
			second, err := h.Disrupt(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			deleted := slices.Contains(append(first.Deleted, second.Deleted...), nc.Name)
			if deleted != (tt.wantKept == 0) {
				t.Fatalf("deleted = %v, want kept for %s", deleted, tt.wantKept)
			}
			checkInvalidEvents(t, h.events.Events(), tt.wantEvent, tt.name, node.Name)
			if tt.wantKept <= 0 {
				return
			}
			// Once the pod is as old as its annotation says, the node goes.
			h.clock.Step(tt.wantKept)
			if deleted := h.decideAndCarryOut(t); !slices.Contains(deleted, nc.Name) {
				t.Errorf("after the protection ended, deleted %v, want %s", deleted, nc.Name)
			}
		})
	}
}

// checkInvalidEvents checks the InvalidDoNotDisruptAnnotation events: none when want is "", else
// exactly one (two passes tell it once), on the pod or the node as want says, naming the value.
func checkInvalidEvents(t *testing.T, events []string, want, podName, nodeName string) {
	t.Helper()
	var invalid []string
	for _, e := range events {
		if strings.Contains(e, " "+disruption.ReasonInvalidDoNotDisrupt+" ") {
			invalid = append(invalid, e)
		}
	}
	switch want {
	case "":
		if len(invalid) > 0 {
			t.Errorf("events %q, want no %s", invalid, disruption.ReasonInvalidDoNotDisrupt)
		}
	case "pod":
		prefix := podName + " Warning " + disruption.ReasonInvalidDoNotDisrupt + " " + v1.DoNotDisruptAnnotationKey + `="soon" is not ` + v1.DoNotDisruptPodForms
		if len(invalid) != 1 || !strings.HasPrefix(invalid[0], prefix) {
			t.Errorf("events %q, want one starting %q", invalid, prefix)
		}
	case "node":
		if len(invalid) != 1 || !strings.HasPrefix(invalid[0], nodeName+" Warning ") || !strings.Contains(invalid[0], `"4h"`) {
			t.Errorf("events %q, want one on node %s naming the value", invalid, nodeName)
		}
	}
}
