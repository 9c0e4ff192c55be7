package lifecycle

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/pkg/agenttaint"
)

// notReadyCause is a kubelet Ready condition operators meet on EKS, recognised by its reason or
// a phrase of its message (the kubelet's and the node lifecycle controller's own wording), and
// what to look at.
type notReadyCause struct {
	reasons, phrases []string
	// hint is printed after the kubelet's words; {node} stands for the Node's name.
	hint string
}

// notReadyCauses are tried in order; the first whose reason or phrase matches gives the hint.
var notReadyCauses = []notReadyCause{
	{
		phrases: []string{"NetworkPluginNotReady", "cni plugin not initialized", "cni config uninitialized", "network plugin is not ready"},
		hint: "the node's CNI has not started. On EKS that is the VPC CNI (the aws-node DaemonSet): " +
			"`kubectl -n kube-system get pods -l k8s-app=aws-node -o wide --field-selector spec.nodeName={node}` and its logs. " +
			"Usual causes: its image cannot be pulled (a private subnet with no route to ECR: add VPC endpoints or a NAT gateway), " +
			"it lacks IAM permissions (AmazonEKS_CNI_Policy on the node role or on aws-node's IRSA/Pod Identity role), " +
			"or the subnet has no free IP addresses",
	},
	{
		phrases: []string{"container runtime is down", "ContainerRuntimeNotReady", "container runtime status check may not have completed"},
		hint:    "the container runtime (containerd) is not running on the instance: read `joiner explain nodeclaim` for its console output, or `journalctl -u containerd` on the host",
	},
	{
		phrases: []string{"PLEG is not healthy"},
		hint:    "the kubelet's pod lifecycle event generator is stuck, usually because the container runtime is overloaded or hung: look at the instance's CPU and memory and at containerd's journal",
	},
	{
		reasons: []string{"NodeStatusUnknown"},
		phrases: []string{"Kubelet stopped posting node status", "Kubelet never posted node status"},
		hint: "the kubelet stopped reporting to the API server: the instance may be stopped or overloaded " +
			"(memory exhausted without kubeReserved/systemReserved), or its security groups no longer let it reach the cluster endpoint",
	},
}

// notReadyMessage explains a registered Node that is not Ready: the kubelet's own reason and
// message, pressure conditions it reports, and for causes operators meet on EKS what to look at.
func notReadyMessage(node *corev1.Node) string {
	i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
	if i < 0 {
		return fmt.Sprintf("Node %s is not Ready: the kubelet has not reported a Ready condition yet", node.Name)
	}
	ready := node.Status.Conditions[i]
	var b strings.Builder
	fmt.Fprintf(&b, "Node %s is not Ready (Ready=%s", node.Name, ready.Status)
	if ready.Reason != "" {
		fmt.Fprintf(&b, ", %s", ready.Reason)
	}
	b.WriteString(")")
	if ready.Message != "" {
		fmt.Fprintf(&b, ": %s", ready.Message)
	}
	var pressure []string
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady && c.Status == corev1.ConditionTrue && strings.HasSuffix(string(c.Type), "Pressure") {
			pressure = append(pressure, string(c.Type))
		}
	}
	if len(pressure) > 0 {
		fmt.Fprintf(&b, "; the kubelet also reports %s", strings.Join(pressure, ", "))
	}
	if hint := notReadyHint(ready); hint != "" {
		b.WriteString(". Likely cause: " + strings.ReplaceAll(hint, "{node}", node.Name))
	}
	return b.String()
}

func notReadyHint(ready corev1.NodeCondition) string {
	for _, c := range notReadyCauses {
		if slices.Contains(c.reasons, ready.Reason) || slices.ContainsFunc(c.phrases, func(p string) bool {
			return strings.Contains(strings.ToLower(ready.Message), strings.ToLower(p))
		}) {
			return c.hint
		}
	}
	return ""
}

// taintsLeftMessage names the startup and not-ready taints a Ready Node still carries and, for a
// known agent's taint, the agent that removes it once it runs on the node.
func taintsLeftMessage(node *corev1.Node, left []corev1.Taint) string {
	var names, agents []string
	for _, t := range left {
		names = append(names, t.ToString())
		if a, ok := agenttaint.Lookup(t); ok {
			agents = append(agents, fmt.Sprintf("%s removes %s once its pod runs on the node", a.Name, t.Key))
		}
	}
	msg := fmt.Sprintf("Node %s still has the taints %s", node.Name, strings.Join(names, ", "))
	if len(agents) > 0 {
		msg += " (" + strings.Join(agents, "; ") + ": look at that DaemonSet's pod on this node)"
	}
	return msg
}
