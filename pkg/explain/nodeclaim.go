package explain

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// lifecycle is the order of a NodeClaim's timeline.
var lifecycle = []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized, v1.ConditionTypeReady}

// NodeClaimReport is a NodeClaim's timeline and diagnosis.
type NodeClaimReport struct {
	Name string `json:"name"`
	// Exists is false when the NodeClaim is gone and only its events are left.
	Exists       bool       `json:"exists"`
	NodePool     string     `json:"nodePool,omitempty"`
	ProviderID   string     `json:"providerID,omitempty"`
	NodeName     string     `json:"nodeName,omitempty"`
	InstanceType string     `json:"instanceType,omitempty"`
	Zone         string     `json:"zone,omitempty"`
	CapacityType string     `json:"capacityType,omitempty"`
	Created      *time.Time `json:"created,omitempty"`
	Deleted      *time.Time `json:"deleted,omitempty"`
	// Timeline holds Created, then Launched, Registered, Initialized and Ready, then every other
	// condition the NodeClaim carries, each with its status, time, reason and message.
	Timeline []Step `json:"timeline"`
	// Node is the Node with the NodeClaim's providerID, when one joined.
	Node *NodeState `json:"node,omitempty"`
	// Events about the NodeClaim, oldest first.
	Events []Event `json:"events,omitempty"`
	// Diagnosis is what holds the NodeClaim now, from its conditions: the first lifecycle
	// condition not True, and every other condition that is False.
	Diagnosis []string `json:"diagnosis"`
}

// NodeState is what the NodeClaim's Node shows: whether it is Ready and the taints it carries.
type NodeState struct {
	Name  string `json:"name"`
	Ready string `json:"ready"`
	// ReadyMessage is the kubelet's message on its Ready condition.
	ReadyMessage string   `json:"readyMessage,omitempty"`
	Taints       []string `json:"taints,omitempty"`
}

// Step is one condition of the timeline.
type Step struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	// Time is when the condition last changed status (the creation time for Created).
	Time    *time.Time `json:"time,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Message string     `json:"message,omitempty"`
}

// Event is one event about the NodeClaim.
type Event struct {
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	Reason string    `json:"reason"`
	Note   string    `json:"note"`
	Count  int32     `json:"count,omitempty"`
}

// NodeClaim builds the report of the NodeClaim named name from nc (nil when it no longer exists),
// its Node (nil when none joined) and the events whose subject it is (core/v1 view of events of
// either API).
func NodeClaim(name string, nc *v1.NodeClaim, node *corev1.Node, events []corev1.Event) *NodeClaimReport {
	r := &NodeClaimReport{Name: name}
	if node != nil {
		ns := &NodeState{Name: node.Name, Ready: string(corev1.ConditionUnknown)}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ns.Ready, ns.ReadyMessage = string(c.Status), c.Message
			}
		}
		for _, t := range node.Spec.Taints {
			ns.Taints = append(ns.Taints, t.ToString())
		}
		r.Node = ns
	}
	for i := range events {
		e := &events[i]
		if nc != nil && e.InvolvedObject.UID != "" && e.InvolvedObject.UID != nc.UID {
			continue // an earlier NodeClaim of the same name
		}
		r.Events = append(r.Events, Event{Time: eventTime(e), Type: e.Type, Reason: e.Reason, Note: e.Message, Count: e.Count})
	}
	slices.SortStableFunc(r.Events, func(a, b Event) int { return a.Time.Compare(b.Time) })
	if nc == nil {
		r.Diagnosis = []string{"The NodeClaim no longer exists; the events below are what is left of it (events expire after an hour)"}
		return r
	}
	r.Exists = true
	r.NodePool = nc.Labels[v1.NodePoolLabelKey]
	r.ProviderID, r.NodeName = nc.Status.ProviderID, nc.Status.NodeName
	r.InstanceType, r.Zone, r.CapacityType = nc.Labels[corev1.LabelInstanceTypeStable], nc.Labels[corev1.LabelTopologyZone], nc.Labels[v1.CapacityTypeLabelKey]
	created := nc.CreationTimestamp.Time
	r.Created = &created
	if nc.DeletionTimestamp != nil {
		d := nc.DeletionTimestamp.Time
		r.Deleted = &d
	}
	r.Timeline = append(r.Timeline, Step{Type: "Created", Status: string(metav1.ConditionTrue), Time: &created})
	others := slices.Clone(nc.Status.Conditions)
	slices.SortStableFunc(others, func(a, b metav1.Condition) int { return cmp.Compare(a.Type, b.Type) })
	for _, t := range lifecycle {
		i := slices.IndexFunc(nc.Status.Conditions, func(c metav1.Condition) bool { return c.Type == t })
		if i < 0 {
			r.Timeline = append(r.Timeline, Step{Type: t, Status: "(not reported)"})
			continue
		}
		r.Timeline = append(r.Timeline, step(nc.Status.Conditions[i]))
	}
	for _, c := range others {
		if !slices.Contains(lifecycle, c.Type) {
			r.Timeline = append(r.Timeline, step(c))
		}
	}
	r.Diagnosis = diagnose(nc)
	return r
}

func step(c metav1.Condition) Step {
	s := Step{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	if !c.LastTransitionTime.IsZero() {
		t := c.LastTransitionTime.Time
		s.Time = &t
	}
	return s
}

// diagnose names what holds the NodeClaim: the first of Launched, Registered and Initialized that
// is not True (with its reason and message), every other condition that is False, and deletion.
func diagnose(nc *v1.NodeClaim) []string {
	var out []string
	if nc.DeletionTimestamp != nil {
		out = append(out, fmt.Sprintf("Being deleted since %s", nc.DeletionTimestamp.UTC().Format(time.RFC3339)))
	}
	for _, t := range lifecycle[:3] {
		i := slices.IndexFunc(nc.Status.Conditions, func(c metav1.Condition) bool { return c.Type == t })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s: not reported yet (is the controller running?)", t))
			break
		}
		c := nc.Status.Conditions[i]
		if c.Status != metav1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
			break
		}
	}
	for _, c := range nc.Status.Conditions {
		if c.Status == metav1.ConditionFalse && !slices.Contains(lifecycle, c.Type) {
			out = append(out, fmt.Sprintf("%s=False %s: %s", c.Type, c.Reason, c.Message))
		}
	}
	if len(out) == 0 {
		out = append(out, "Initialized: the node is ready and holds pods")
	}
	return out
}

// eventTime is when the event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// WriteText prints the report for a terminal: identity, the timeline with the time elapsed since
// creation, the diagnosis, then the events.
func (r *NodeClaimReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "NodeClaim %s", r.Name)
	if r.NodePool != "" {
		fmt.Fprintf(&b, " (NodePool %s)", r.NodePool)
	}
	b.WriteString("\n")
	for _, kv := range [][2]string{{"instance", r.ProviderID}, {"node", r.NodeName}, {"instance type", r.InstanceType}, {"zone", r.Zone}, {"capacity type", r.CapacityType}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "  %s: %s\n", kv[0], kv[1])
		}
	}
	if r.Node != nil {
		fmt.Fprintf(&b, "  node %s: Ready=%s", r.Node.Name, r.Node.Ready)
		if r.Node.ReadyMessage != "" {
			fmt.Fprintf(&b, " (%s)", r.Node.ReadyMessage)
		}
		fmt.Fprintf(&b, ", taints: %s\n", cmp.Or(strings.Join(r.Node.Taints, ", "), "none"))
	}
	if len(r.Timeline) > 0 {
		b.WriteString("\nTimeline:\n")
	}
	for _, s := range r.Timeline {
		when := "-"
		if s.Time != nil {
			when = s.Time.UTC().Format(time.RFC3339)
			if r.Created != nil && s.Type != "Created" {
				when += fmt.Sprintf(" (+%s)", s.Time.Sub(*r.Created).Round(time.Second))
			}
		}
		fmt.Fprintf(&b, "  %-20s %-14s %-32s %s", s.Type, s.Status, when, s.Reason)
		if s.Message != "" {
			fmt.Fprintf(&b, ": %s", s.Message)
		}
		b.WriteString("\n")
	}
	if r.Deleted != nil {
		fmt.Fprintf(&b, "  %-20s %-14s %s\n", "Deleted", "", r.Deleted.UTC().Format(time.RFC3339))
	}
	b.WriteString("\nDiagnosis:\n")
	for _, d := range r.Diagnosis {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	if len(r.Events) > 0 {
		b.WriteString("\nEvents:\n")
	}
	for _, e := range r.Events {
		count := ""
		if e.Count > 1 {
			count = fmt.Sprintf(" (x%d)", e.Count)
		}
		fmt.Fprintf(&b, "  %s %-7s %s%s: %s\n", e.Time.UTC().Format(time.RFC3339), e.Type, e.Reason, count, e.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
