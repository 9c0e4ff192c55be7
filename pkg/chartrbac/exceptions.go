package chartrbac

// UnusedExceptions are the grants of the chart (Grant.String of a rendering as release joiner in
// kube-system) that an end-to-end run may leave unused, each with the reason it is granted all
// the same. charts/joiner/README.md lists the same ones; a test holds the two together.
var UnusedExceptions = map[string]string{
	"ClusterRole: delete core/pods":           "termination deletes a pod only when it outlives its node's terminationGracePeriod during drain",
	"ClusterRole: patch events.k8s.io/events": "an event is patched only when an identical one repeats within the aggregation window",
	"Role: patch core/events in kube-system":  "leader election's event is patched only when an identical one repeats within the aggregation window",
}
