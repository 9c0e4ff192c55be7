package agenttaint

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Agent is one catalogue entry: the taint an agent removes once it is ready.
type Agent struct {
	// Key is the taint key the agent removes (whatever the effect).
	Key string
	// Value and Effect are what its documentation recommends registering the taint with.
	Value  string
	Effect corev1.TaintEffect
	// Name is the agent, as operators know it.
	Name string
	// Declare is true when the operator should list the taint in startupTaints. It is false for
	// taints the control plane adds and removes itself (the node lifecycle controller's
	// network-unavailable taint), which no node registers with.
	Declare bool
}

// Taint returns the taint the agent's documentation recommends.
func (a Agent) Taint() corev1.Taint {
	return corev1.Taint{Key: a.Key, Value: a.Value, Effect: a.Effect}
}

// catalogue is every known agent taint. Keys and recommended effects are those of each project's
// documentation and source (the key each agent deletes at startup).
var catalogue = []Agent{
	{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute, Name: "Cilium", Declare: true},
	{Key: "cni.istio.io/not-ready", Value: "true", Effect: corev1.TaintEffectNoSchedule, Name: "Istio CNI", Declare: true},
	{Key: "ebs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute, Name: "Amazon EBS CSI driver", Declare: true},
	{Key: "efs.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute, Name: "Amazon EFS CSI driver", Declare: true},
	{Key: "fsx.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute, Name: "Amazon FSx for Lustre CSI driver", Declare: true},
	{Key: "s3.csi.aws.com/agent-not-ready", Effect: corev1.TaintEffectNoExecute, Name: "Mountpoint for Amazon S3 CSI driver", Declare: true},
	// Calico has no taint of its own: it reports the node's NetworkUnavailable condition, which
	// the node lifecycle controller turns into this taint until Calico clears it.
	{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule, Name: "Calico (NetworkUnavailable condition)", Declare: false},
}

// All returns a copy of the catalogue.
func All() []Agent { return slices.Clone(catalogue) }

// Lookup returns the catalogue entry of the taint's key.
func Lookup(t corev1.Taint) (Agent, bool) {
	i := slices.IndexFunc(catalogue, func(a Agent) bool { return a.Key == t.Key })
	if i < 0 {
		return Agent{}, false
	}
	return catalogue[i], true
}

// Is reports whether the taint is a known agent's.
func Is(t corev1.Taint) bool {
	_, ok := Lookup(t)
	return ok
}

// Without returns taints without the agent taints. When there are none it returns taints itself,
// so that the common case allocates nothing; the input is never modified.
func Without(taints []corev1.Taint) []corev1.Taint {
	if !slices.ContainsFunc(taints, Is) {
		return taints
	}
	return slices.DeleteFunc(slices.Clone(taints), Is)
}

// Undeclared returns the taints among observed that the operator should declare in startupTaints
// and has not: agent taints (Declare) that no taint of startupTaints matches by key and effect.
// Each key and effect appears once, in the order observed.
func Undeclared(observed, startupTaints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range observed {
		a, ok := Lookup(t)
		if !ok || !a.Declare {
			continue
		}
		matches := func(s corev1.Taint) bool { return s.MatchTaint(&t) }
		if slices.ContainsFunc(startupTaints, matches) || slices.ContainsFunc(out, matches) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Advice is the message telling the operator of NodePool nodePool to declare taints (agent taints,
// as Undeclared returns them) in startupTaints, with the exact YAML to add. where says where they
// were seen ("on node ip-10-0-1-2", "in spec.template.spec.taints").
func Advice(nodePool, where string, taints []corev1.Taint) string {
	var names, agents []string
	for _, t := range taints {
		names = append(names, t.ToString())
		if a, ok := Lookup(t); ok && !slices.Contains(agents, a.Name) {
			agents = append(agents, a.Name)
		}
	}
	return fmt.Sprintf("Agent taint %s (%s) seen %s is removed by its agent once the agent is ready; "+
		"declare it in NodePool %s's spec.template.spec.startupTaints so that Joiner waits for it before counting the node initialized "+
		"(it is already ignored when deciding whether pods fit). Add:\n%s",
		strings.Join(names, ", "), strings.Join(agents, ", "), where, nodePool, StartupTaintsYAML(taints))
}

// StartupTaintsYAML renders taints as the NodePool fragment that declares them.
func StartupTaintsYAML(taints []corev1.Taint) string {
	var b strings.Builder
	b.WriteString("spec:\n  template:\n    spec:\n      startupTaints:\n")
	for _, t := range taints {
		fmt.Fprintf(&b, "      - key: %s\n", t.Key)
		if t.Value != "" {
			fmt.Fprintf(&b, "        value: %q\n", t.Value)
		}
		fmt.Fprintf(&b, "        effect: %s\n", t.Effect)
	}
	return b.String()
}
