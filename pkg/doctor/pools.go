package doctor

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Reasons of the NodePool and pod checks.
const (
	ReasonNodeClassNotFound          = "NodeClassNotFound"
	ReasonNodeClassRefUnsupported    = "NodeClassRefUnsupported"
	ReasonArchitectureWithoutAMI     = "ArchitectureWithoutAMI"
	ReasonCustomAMIArchitectures     = "CustomAMIArchitecturesUnverified"
	ReasonPodFitsNoNodePool          = "PodFitsNoNodePool"
	ReasonNodePoolRequirementInvalid = "NodePoolRequirementInvalid"
)

func checkNodePools(obs *Observations) []Finding {
	var out []Finding
	for _, np := range obs.NodePools {
		object := "NodePool/" + np.Name
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref == nil {
			out = append(out, Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonNodeClassRefUnsupported,
				Message: fmt.Sprintf("NodePool %s has no spec.template.spec.nodeClassRef, so it can launch nothing", np.Name),
				Fix:     "set spec.template.spec.nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: <an EC2NodeClass>}"})
			continue
		}
		if (ref.Group != "" && ref.Group != awsv1.Group) || (ref.Kind != "" && ref.Kind != "EC2NodeClass") {
			out = append(out, Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonNodeClassRefUnsupported,
				Message: fmt.Sprintf("NodePool %s refers to %s %s/%s: Joiner launches only from %s EC2NodeClasses", np.Name, ref.Kind, ref.Group, ref.Name, awsv1.Group),
				Fix:     fmt.Sprintf("set spec.template.spec.nodeClassRef to {group: %s, kind: EC2NodeClass, name: %s}", awsv1.Group, ref.Name)})
			continue
		}
		i := slices.IndexFunc(obs.NodeClasses, func(nc *awsv1.EC2NodeClass) bool { return nc.Name == ref.Name })
		if i < 0 {
			f := Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonNodeClassNotFound,
				Message: fmt.Sprintf("NodePool %s refers to EC2NodeClass %s, which does not exist: the NodePool reports NodeClassReady=False and launches nothing", np.Name, ref.Name),
				Fix:     fmt.Sprintf("create EC2NodeClass %s, or set spec.template.spec.nodeClassRef.name to one of: %s", ref.Name, strings.Join(classNames(obs.NodeClasses), ", "))}
			if !obs.NodeClassesComplete {
				f.Severity = nodejoin.SeverityWarning
				f.Message = fmt.Sprintf("NodePool %s refers to EC2NodeClass %s, which is not in the manifests: unless it already exists in the cluster, the NodePool launches nothing", np.Name, ref.Name)
			}
			out = append(out, f)
			continue
		}
		out = append(out, checkPoolArchitectures(np, obs.NodeClasses[i], obs.InstanceTypes[ref.Name])...)
	}
	return out
}

func classNames(classes []*awsv1.EC2NodeClass) []string {
	names := []string{}
	for _, nc := range classes {
		names = append(names, nc.Name)
	}
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

// poolArchitectures returns the architectures a NodePool's kubernetes.io/arch requirement allows
// when it lists them with In; nil when it has no such requirement. Without one, the instance
// families it allows decide, and those are not known offline (t4g is arm64 only): guessing "both"
// would warn about NodePools that are fine.
//
// With the class's instance types (live), they decide: the architectures of the instance types
// every requirement of the NodePool admits.
func poolArchitectures(reqs scheduling.Requirements, types []*cloudprovider.InstanceType) []string {
	if len(types) > 0 {
		var out []string
		for _, arch := range []string{v1.ArchitectureAmd64, v1.ArchitectureArm64} {
			if slices.ContainsFunc(types, func(it *cloudprovider.InstanceType) bool {
				return slices.Contains(it.Requirements[corev1.LabelArchStable], arch) && admits(reqs, it.Requirements)
			}) {
				out = append(out, arch)
			}
		}
		return out
	}
	r, ok := reqs[corev1.LabelArchStable]
	if !ok {
		return nil
	}
	var out []string
	for _, arch := range []string{v1.ArchitectureAmd64, v1.ArchitectureArm64} {
		if r.Has(arch) {
			out = append(out, arch)
		}
	}
	return out
}

// admits: every requirement on a label the instance type defines allows one of its values.
func admits(reqs scheduling.Requirements, labels map[string][]string) bool {
	for key, r := range reqs {
		if values, ok := labels[key]; ok && !slices.ContainsFunc(values, r.Has) {
			return false
		}
	}
	return true
}

// checkPoolArchitectures finds a NodePool that allows an architecture its class selects no AMI
// for. When no AMI at all fits, nodejoin reports it as an Error; here one architecture still
// launches, so instances of the other are never launched (a Warning: the operator asked for them).
// A class selecting AMIs by id, name or tags without its status resolved has AMIs of architectures
// doctor cannot know offline: advice.
func checkPoolArchitectures(np *v1.NodePool, nc *awsv1.EC2NodeClass, types []*cloudprovider.InstanceType) []Finding {
	reqs, err := scheduling.FromNodePoolRequirements(np.Spec.Template.Spec.Requirements)
	if err != nil {
		return []Finding{{Severity: nodejoin.SeverityError, Object: "NodePool/" + np.Name, Reason: ReasonNodePoolRequirementInvalid,
			Message: fmt.Sprintf("NodePool %s spec.template.spec.requirements: %v", np.Name, err),
			Fix:     "correct the requirement: Gt and Lt take one integer value, In takes at least one value"}}
	}
	archs := poolArchitectures(reqs, types)
	if len(archs) < 2 {
		return nil
	}
	if len(nc.Status.AMIs) > 0 {
		var served, unserved []string
		for _, arch := range archs {
			if slices.ContainsFunc(nc.Status.AMIs, func(a awsv1.AMI) bool { return amiArch(a) == "" || amiArch(a) == arch }) {
				served = append(served, arch)
			} else {
				unserved = append(unserved, arch)
			}
		}
		if len(served) == 0 || len(unserved) == 0 {
			return nil // all served, or none: nodejoin's AMIArchitectureMismatch
		}
		return []Finding{{Severity: nodejoin.SeverityWarning, Object: "NodePool/" + np.Name, Reason: ReasonArchitectureWithoutAMI,
			Message: fmt.Sprintf("NodePool %s allows %s instance types, but EC2NodeClass %s resolves AMIs of architecture %s only: Joiner never launches a %s instance from this NodePool (an AMI must match the instance's architecture)",
				np.Name, strings.Join(archs, " and "), nc.Name, strings.Join(served, ", "), strings.Join(unserved, ", ")),
			Fix: fmt.Sprintf("add an AMI of architecture %s to EC2NodeClass %s spec.amiSelectorTerms, or restrict NodePool %s to %s with the requirement {key: kubernetes.io/arch, operator: In, values: [%s]}",
				strings.Join(unserved, ", "), nc.Name, np.Name, strings.Join(served, ", "), strings.Join(served, ", "))}}
	}
	if hasAlias(nc) {
		return nil // an alias resolves one AMI per architecture
	}
	return []Finding{{Severity: nodejoin.SeverityAdvice, Object: "NodePool/" + np.Name, Reason: ReasonCustomAMIArchitectures,
		Message: fmt.Sprintf("NodePool %s allows both amd64 and arm64 instance types, and EC2NodeClass %s selects its AMIs by id, name or tags: each AMI has one architecture, and instances of an architecture no selected AMI has are never launched", np.Name, nc.Name),
		Fix:     fmt.Sprintf("select one AMI per architecture in EC2NodeClass %s spec.amiSelectorTerms, or add {key: kubernetes.io/arch, operator: In, values: [<the AMI's architecture>]} to NodePool %s; joiner doctor without -f reads the AMIs' architectures", nc.Name, np.Name)}}
}

func hasAlias(nc *awsv1.EC2NodeClass) bool {
	return slices.ContainsFunc(nc.Spec.AMISelectorTerms, func(t awsv1.AMISelectorTerm) bool { return t.Alias != "" })
}

func amiArch(a awsv1.AMI) string {
	for _, r := range a.Requirements {
		if r.Key == corev1.LabelArchStable && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			return r.Values[0]
		}
	}
	return ""
}

// instanceLabels are the labels an instance type gives a node: a NodePool that does not constrain
// one offers every value.
func instanceLabels() []string {
	return append(append(v1.WellKnownLabels(), awsv1.WellKnownLabels()...), corev1.LabelHostname)
}

// poolNode is what a NodePool's nodes may look like: its requirements, its template labels and,
// for instance-type labels it leaves open, any value.
type poolNode struct {
	pool *v1.NodePool
	reqs scheduling.Requirements
}

func poolNodes(pools []*v1.NodePool) []poolNode {
	var out []poolNode
	for _, np := range pools {
		reqs, err := scheduling.FromNodePoolRequirements(np.Spec.Template.Spec.Requirements)
		if err != nil {
			continue // reported by checkPoolArchitectures
		}
		reqs = reqs.Merge(scheduling.FromLabels(np.Spec.Template.Labels))
		reqs = reqs.Merge(scheduling.FromLabels(map[string]string{v1.NodePoolLabelKey: np.Name}))
		for _, key := range instanceLabels() {
			if _, ok := reqs[key]; !ok {
				r, _ := scheduling.NewRequirement(key, string(corev1.NodeSelectorOpExists), nil)
				reqs.Add(r)
			}
		}
		out = append(out, poolNode{pool: np, reqs: reqs})
	}
	return out
}

// podTerms are the pod's required node constraints: its nodeSelector with each term of its
// required node affinity (the terms are ORed).
func podTerms(pod *corev1.Pod) ([]scheduling.Requirements, error) {
	base := scheduling.FromLabels(pod.Spec.NodeSelector)
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return []scheduling.Requirements{base}, nil
	}
	var out []scheduling.Requirements
	for _, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		reqs, err := scheduling.FromNodeSelectorTerm(term)
		if err != nil {
			return nil, err
		}
		out = append(out, base.Merge(reqs))
	}
	return out, nil
}

// checkPods finds pods that no NodePool can take, for their node selection or their tolerations,
// one finding per distinct pod spec (the replicas of one workload are one finding).
func checkPods(obs *Observations) []Finding {
	if len(obs.NodePools) == 0 {
		return nil
	}
	nodes := poolNodes(obs.NodePools)
	var out []Finding
	seen := map[string]bool{}
	for _, pod := range obs.Pods {
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.Kind == "DaemonSet" {
			continue // bound to one node by the DaemonSet controller, never a NodePool's concern
		}
		why, ok := podFits(pod, nodes)
		if ok {
			continue
		}
		owner := workloadOf(pod)
		if seen[owner+"\x00"+strings.Join(why, "\x00")] {
			continue
		}
		seen[owner+"\x00"+strings.Join(why, "\x00")] = true
		out = append(out, Finding{Severity: nodejoin.SeverityWarning, Object: owner, Reason: ReasonPodFitsNoNodePool,
			Message: fmt.Sprintf("no NodePool can launch a node for pod %s/%s, so it stays Pending unless an existing node fits: %s", pod.Namespace, pod.Name, strings.Join(why, "; ")),
			Fix:     "change the pod's nodeSelector, node affinity or tolerations to what a NodePool offers, or add the label value (spec.template.metadata.labels or a requirement) or drop the taint in a NodePool"})
	}
	return out
}

// workloadOf names the pod's workload: its controller (live), else the <owner> of the <owner>-<i>
// names pkg/manifest gives the pods of a workload.
func workloadOf(pod *corev1.Pod) string {
	if owner := metav1.GetControllerOf(pod); owner != nil {
		return owner.Kind + "/" + pod.Namespace + "/" + owner.Name
	}
	name := pod.Name
	if i := strings.LastIndex(name, "-"); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return "Pod/" + pod.Namespace + "/" + name
}

// podFits reports whether some NodePool admits the pod, and otherwise why each does not.
func podFits(pod *corev1.Pod, nodes []poolNode) ([]string, bool) {
	terms, err := podTerms(pod)
	if err != nil {
		return nil, true // matchFields (a pod bound to a named node): not a NodePool's concern
	}
	var why []string
	for _, n := range nodes {
		if t, ok := untolerated(pod, n.pool); !ok {
			why = append(why, fmt.Sprintf("NodePool %s has taint %s, which the pod does not tolerate", n.pool.Name, t.ToString()))
			continue
		}
		var termWhy []string
		fits := false
		for _, term := range terms {
			if err := n.reqs.Compatible(term); err != nil {
				termWhy = append(termWhy, offered(n, term))
				continue
			}
			fits = true
			break
		}
		if fits {
			return nil, true
		}
		why = append(why, fmt.Sprintf("NodePool %s %s", n.pool.Name, strings.Join(termWhy, ", nor ")))
	}
	return why, false
}

func untolerated(pod *corev1.Pod, np *v1.NodePool) (corev1.Taint, bool) {
	for _, t := range np.Spec.Template.Spec.Taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &t, false) }) {
			return t, false
		}
	}
	return corev1.Taint{}, true
}

// offered names the first label of the pod's term the NodePool's nodes cannot carry, with the
// values the NodePool offers for it.
func offered(n poolNode, term scheduling.Requirements) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range term {
			if !yield(k) {
				return
			}
		}
	})
	for _, key := range keys {
		single := scheduling.Requirements{key: term[key]}
		if n.reqs.Compatible(single) == nil {
			continue
		}
		values := templateValues(n.pool, key)
		if len(values) == 0 {
			return fmt.Sprintf("offers no label %s (the pod asks for %s)", key, term[key])
		}
		return fmt.Sprintf("offers %s only %s (the pod asks for %s)", key, quoteList(values), term[key])
	}
	return "cannot satisfy the pod's node selection as a whole"
}

// templateValues are the values a NodePool gives label key: its template label, or the values of
// its In requirement.
func templateValues(np *v1.NodePool, key string) []string {
	if v, ok := np.Spec.Template.Labels[key]; ok {
		return []string{v}
	}
	for _, r := range np.Spec.Template.Spec.Requirements {
		if r.Key == key && r.Operator == v1.NodeSelectorOpIn {
			return r.Values
		}
	}
	return nil
}
