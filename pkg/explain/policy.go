package explain

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// schedulingNotes says how the scheduling settings in in and the pod's label keys shape the
// simulation of pod: preferences left out under PreferenceIgnore, default topology spread
// constraints the pod gets (with the selector deduced for it), and selectors its
// matchLabelKeys and mismatchLabelKeys narrow.
func schedulingNotes(in *scheduling.Input, pod *corev1.Pod) []string {
	var out []string
	if in.PreferencePolicy == scheduling.PreferenceIgnore {
		if prefs := preferencesOf(pod); len(prefs) > 0 {
			out = append(out, fmt.Sprintf("preference policy Ignore: left out %s", strings.Join(prefs, ", ")))
		}
	}
	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		if cs := scheduling.SpreadConstraints(pod, in.DefaultSpread); len(cs) > 0 {
			var parts []string
			for _, c := range cs {
				parts = append(parts, fmt.Sprintf("%s maxSkew %d %s", c.TopologyKey, c.MaxSkew, c.WhenUnsatisfiable))
			}
			out = append(out, fmt.Sprintf("default topology spread constraints (scheduler config) apply, selecting %s: %s",
				metav1.FormatLabelSelector(cs[0].LabelSelector), strings.Join(parts, "; ")))
		} else if in.DefaultSpread != nil && len(in.DefaultSpread.Constraints) > 0 {
			out = append(out, "default topology spread constraints (scheduler config) do not apply: no Service selects the pod and its controller is no ReplicationController, ReplicaSet or StatefulSet")
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if len(c.MatchLabelKeys) > 0 {
			out = append(out, fmt.Sprintf("topology spread on %s counts pods selected by %s (matchLabelKeys %s)", c.TopologyKey,
				metav1.FormatLabelSelector(scheduling.WithLabelKeys(c.LabelSelector, pod.Labels, c.MatchLabelKeys, nil)), strings.Join(c.MatchLabelKeys, ", ")))
		}
	}
	if a := pod.Spec.Affinity; a != nil {
		for kind, terms := range map[string][]corev1.PodAffinityTerm{"pod affinity": requiredTerms(a.PodAffinity), "pod anti-affinity": requiredAntiTerms(a.PodAntiAffinity)} {
			for _, t := range terms {
				if len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 {
					out = append(out, fmt.Sprintf("%s on %s selects %s (matchLabelKeys %v, mismatchLabelKeys %v)", kind, t.TopologyKey,
						metav1.FormatLabelSelector(scheduling.WithLabelKeys(t.LabelSelector, pod.Labels, t.MatchLabelKeys, t.MismatchLabelKeys)), t.MatchLabelKeys, t.MismatchLabelKeys))
				}
			}
		}
	}
	return out
}

func requiredTerms(a *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func requiredAntiTerms(a *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

// preferencesOf names the pod's preferences that PreferenceIgnore leaves out.
func preferencesOf(pod *corev1.Pod) []string {
	var out []string
	if a := pod.Spec.Affinity; a != nil {
		if a.NodeAffinity != nil && len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			out = append(out, "preferred node affinity")
		}
		if a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			out = append(out, "preferred pod affinity")
		}
		if a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			out = append(out, "preferred pod anti-affinity")
		}
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.ScheduleAnyway {
			out = append(out, "ScheduleAnyway topology spread on "+c.TopologyKey)
		}
	}
	return out
}
