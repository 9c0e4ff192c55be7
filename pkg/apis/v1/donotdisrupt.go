package v1

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DoNotDisruptPodForms are the values DoNotDisruptAnnotationKey takes on a pod, as events and
// messages name them.
const DoNotDisruptPodForms = `"true" or a positive Go duration such as "4h"`

// PodDoNotDisrupt reads the pod's DoNotDisruptAnnotationKey at now, as Karpenter (v1.12 on)
// reads it: whether it protects the pod from voluntary disruption and eviction by a drain, and
// until when.
//   - absent: not protected.
//   - "true": protected with no end; until is the zero time.
//   - a positive Go duration d ("30m", "4h"): protected while the pod is younger than d, its age
//     counted from status.startTime, when a kubelet accepted it (not from its creation: a pod
//     that waited for a node has all of d once it runs); until is startTime + d. A pod no
//     kubelet has accepted yet is protected, with no known end (until is zero).
//   - anything else ("false", "-1h", "yes"): not protected, as Karpenter ignores it; the error
//     names the value and the accepted forms, for an event on the pod.
func PodDoNotDisrupt(pod *corev1.Pod, now time.Time) (protected bool, until time.Time, err error) {
	value, ok := pod.Annotations[DoNotDisruptAnnotationKey]
	if !ok {
		return false, time.Time{}, nil
	}
	if value == "true" {
		return true, time.Time{}, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d <= 0 {
		return false, time.Time{}, fmt.Errorf("%s=%q is not %s; the annotation is ignored", DoNotDisruptAnnotationKey, value, DoNotDisruptPodForms)
	}
	if pod.Status.StartTime == nil {
		return true, time.Time{}, nil
	}
	until = pod.Status.StartTime.Add(d)
	if !now.Before(until) {
		return false, time.Time{}, nil
	}
	return true, until, nil
}

// ObjectDoNotDisrupt reads DoNotDisruptAnnotationKey on a Node or NodeClaim: only "true"
// protects it, as Karpenter reads it there (a duration applies to pods only). Any other value
// protects nothing; the error names one other than "false", which means what it says, for an
// event on the object.
func ObjectDoNotDisrupt(annotations map[string]string) (bool, error) {
	switch value, ok := annotations[DoNotDisruptAnnotationKey]; {
	case !ok || value == "false":
		return false, nil
	case value == "true":
		return true, nil
	default:
		return false, fmt.Errorf(`%s=%q is ignored on a Node or NodeClaim, which take only "true" (a duration applies to pods only)`, DoNotDisruptAnnotationKey, value)
	}
}
