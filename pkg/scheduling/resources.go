package scheduling

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// PodRequests returns what a pod needs of a node, as kube-scheduler counts it: the larger of the
// summed containers (plus restartable init containers, the sidecars) and each init container
// (plus the sidecars started before it), plus the pod overhead, plus one "pods". Pod-level
// requests (spec.resources) replace the containers' for the resources they name that
// kube-scheduler takes at pod level (cpu, memory, hugepages).
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addList(sum, pod.Spec.Containers[i].Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	peak := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(sidecars, c.Resources.Requests)
			continue
		}
		step := corev1.ResourceList{}
		addList(step, c.Resources.Requests)
		addList(step, sidecars)
		maxList(peak, step)
	}
	addList(sum, sidecars)
	maxList(sum, peak)
	if pod.Spec.Resources != nil {
		for name, q := range pod.Spec.Resources.Requests {
			if podLevelResource(name) {
				sum[name] = q.DeepCopy()
			}
		}
	}
	addList(sum, pod.Spec.Overhead)
	sum[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return sum
}

// podLevelResource reports whether kube-scheduler reads a pod-level request of name in place of
// its containers': cpu, memory and hugepages (the PodLevelResources feature).
func podLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func addList(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}

func maxList(dst, src corev1.ResourceList) {
	for name, q := range src {
		if cur, ok := dst[name]; !ok || q.Cmp(cur) > 0 {
			dst[name] = q.DeepCopy()
		}
	}
}

// dims maps resource names to vector positions for one Solve. CPU is counted in millicores,
// everything else in units.
type dims struct {
	names []corev1.ResourceName
	index map[corev1.ResourceName]int
}

func newDims() *dims {
	d := &dims{index: map[corev1.ResourceName]int{}}
	for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		d.add(n)
	}
	return d
}

func (d *dims) add(n corev1.ResourceName) {
	if _, ok := d.index[n]; !ok {
		d.index[n] = len(d.names)
		d.names = append(d.names, n)
	}
}

func (d *dims) addAll(l corev1.ResourceList) {
	for n := range l {
		d.add(n)
	}
}

// vec converts l; names not registered are ignored (callers register every request first).
func (d *dims) vec(l corev1.ResourceList) []int64 {
	v := make([]int64, len(d.names))
	for n, q := range l {
		if i, ok := d.index[n]; ok {
			if n == corev1.ResourceCPU {
				v[i] = q.MilliValue()
			} else {
				v[i] = q.Value()
			}
		}
	}
	return v
}

func (d *dims) list(v []int64) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i, n := range d.names {
		if v[i] == 0 {
			continue
		}
		if n == corev1.ResourceCPU {
			l[n] = *resource.NewMilliQuantity(v[i], resource.DecimalSI)
		} else {
			l[n] = *resource.NewQuantity(v[i], resource.BinarySI)
		}
	}
	return l
}

// fitsSum reports whether used+req <= alloc in every dimension.
func fitsSum(used, req, alloc []int64) bool {
	for i := range req {
		if used[i]+req[i] > alloc[i] {
			return false
		}
	}
	return true
}

func addVec(dst, src []int64) {
	for i := range src {
		dst[i] += src[i]
	}
}

// format renders v as "cpu=500m, memory=512Mi, pods=1" for messages.
func (d *dims) format(v []int64) string {
	l := d.list(v)
	parts := make([]string, 0, len(l))
	for _, n := range d.names {
		if q, ok := l[n]; ok {
			parts = append(parts, string(n)+"="+q.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
