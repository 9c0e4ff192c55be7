package check

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// exprMatches evaluates one node selector expression against node labels.
func exprMatches(labels map[string]string, key, op string, values []string) bool {
	val, present := labels[key]
	num := func() (int64, int64, bool) {
		if !present || len(values) != 1 {
			return 0, 0, false
		}
		a, err1 := strconv.ParseInt(val, 10, 64)
		b, err2 := strconv.ParseInt(values[0], 10, 64)
		return a, b, err1 == nil && err2 == nil
	}
	contains := func() bool {
		for _, v := range values {
			if v == val {
				return true
			}
		}
		return false
	}
	switch op {
	case "In":
		return present && contains()
	case "NotIn":
		return !present || !contains()
	case "Exists":
		return present
	case "DoesNotExist":
		return !present
	case "Gt", "Lt", "Gte", "Lte":
		a, b, ok := num()
		if !ok {
			return false
		}
		switch op {
		case "Gt":
			return a > b
		case "Lt":
			return a < b
		case "Gte":
			return a >= b
		}
		return a <= b
	}
	return false
}

func nodeClaimReqsMatch(labels map[string]string, reqs []v1.NodeSelectorRequirementWithMinValues) bool {
	for _, r := range reqs {
		if !exprMatches(labels, r.Key, string(r.Operator), r.Values) {
			return false
		}
	}
	return true
}

// podSelectsNode is nodeSelector AND (any required node affinity term).
func podSelectsNode(pod *corev1.Pod, labels map[string]string) bool {
	for k, v := range pod.Spec.NodeSelector {
		if labels[k] != v {
			return false
		}
		if _, ok := labels[k]; !ok {
			return false
		}
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		ok := len(term.MatchExpressions) > 0 || len(term.MatchFields) > 0
		for _, e := range term.MatchExpressions {
			if !exprMatches(labels, e.Key, string(e.Operator), e.Values) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func toleratesAll(pod *corev1.Pod, taints []corev1.Taint) bool {
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		ok := false
		for _, tol := range pod.Spec.Tolerations {
			keyOK := tol.Key == t.Key || (tol.Key == "" && tol.Operator == corev1.TolerationOpExists)
			effOK := tol.Effect == "" || tol.Effect == t.Effect
			valOK := tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value
			if keyOK && effOK && valOK {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// requests recomputes a pod's needs: max(sum of containers + sidecars, each init container +
// sidecars before it), with pod-level cpu, memory and hugepages requests in place of the
// containers', + overhead + 1 pod, as float64 units (cpu in cores).
func requests(pod *corev1.Pod) map[corev1.ResourceName]float64 {
	sum := map[corev1.ResourceName]float64{}
	f := func(q resource.Quantity) float64 { return q.AsApproximateFloat64() }
	for _, c := range pod.Spec.Containers {
		for n, q := range c.Resources.Requests {
			sum[n] += f(q)
		}
	}
	side := map[corev1.ResourceName]float64{}
	peak := map[corev1.ResourceName]float64{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			for n, q := range c.Resources.Requests {
				side[n] += f(q)
				sum[n] += f(q)
			}
			continue
		}
		for n, q := range c.Resources.Requests {
			peak[n] = max(peak[n], f(q)+side[n])
		}
	}
	for n, v := range peak {
		sum[n] = max(sum[n], v)
	}
	if pod.Spec.Resources != nil {
		for n, q := range pod.Spec.Resources.Requests {
			if n == corev1.ResourceCPU || n == corev1.ResourceMemory || strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
				sum[n] = f(q)
			}
		}
	}
	for n, q := range pod.Spec.Overhead {
		sum[n] += f(q)
	}
	sum[corev1.ResourcePods]++
	return sum
}
