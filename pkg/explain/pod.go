package explain

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// Problem kinds: what keeps a pod from a NodePool.
const (
	ProblemUnavailable = "NodePoolUnavailable"
	ProblemTaint       = "TaintNotTolerated"
	ProblemLabel       = "LabelNotOffered"
	ProblemInvalid     = "InvalidRequirements"
	ProblemNoType      = "NoInstanceTypeFits"
	ProblemLimit       = "LimitExceeded"
	// WarningNodesNotJoining and WarningAgentTaint are warnings, not problems.
	WarningNodesNotJoining = "NodesNotJoining"
	WarningAgentTaint      = "AgentTaintNotDeclared"
)

// MaxTypesShown is how many fitting instance types a report lists per NodePool, cheapest first.
const MaxTypesShown = 10

// PodReport explains one pod against every NodePool.
type PodReport struct {
	// Pod is namespace/name.
	Pod string `json:"pod"`
	// Requests are what the pod needs of a node (one "pods" included).
	Requests map[string]string `json:"requests"`
	// NodeName is set when the pod is bound already.
	NodeName string `json:"nodeName,omitempty"`
	// Outcome is what the scheduling simulation does with the pod now: an existing node, a new
	// NodeClaim of a NodePool, or nothing.
	Outcome string `json:"outcome"`
	// PodProblems are reasons that hold against every NodePool (an invalid pod).
	PodProblems []string `json:"podProblems,omitempty"`
	// Scheduling says how the scheduling settings (preference policy, default topology spread
	// constraints) and the pod's matchLabelKeys and mismatchLabelKeys shape the outcome.
	Scheduling []string `json:"scheduling,omitempty"`
	// NodePools are every NodePool, by name.
	NodePools []NodePoolReport `json:"nodePools"`
}

// NodePoolReport is why the pod fits one NodePool or not.
type NodePoolReport struct {
	Name string `json:"name"`
	Fits bool   `json:"fits"`
	// Problems are every reason the pod does not fit; empty when it fits.
	Problems []Problem `json:"problems,omitempty"`
	// Warnings do not keep the pod off the NodePool but matter to it: nodes of the NodePool that
	// fail to join (NodeRegistrationHealthy=False), agent taints it does not declare.
	Warnings []Problem `json:"warnings,omitempty"`
	// Labels are, for every label the pod's node selection asks for, what the NodePool offers.
	Labels []LabelOffer `json:"labels,omitempty"`
	// InstanceTypes are the cheapest types that would hold the pod (at most MaxTypesShown);
	// FittingTypes counts them all.
	InstanceTypes []TypeFit `json:"instanceTypes,omitempty"`
	FittingTypes  int       `json:"fittingTypes"`
}

// Problem is one reason a pod does not fit a NodePool.
type Problem struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// LabelOffer is what a NodePool offers for one label the pod asks for.
type LabelOffer struct {
	Key string `json:"key"`
	// Term is the 1-based node-affinity term the requirement comes from, 0 for a pod with one
	// term (or only a nodeSelector).
	Term int `json:"term,omitempty"`
	// PodRequires is the pod's requirement, such as "pod-type In [armapp]".
	PodRequires string `json:"podRequires"`
	// Offered are the values the NodePool's nodes can carry; nil with AnyExcept set when the
	// NodePool allows every value but some; nil with neither when its nodes never carry the label.
	Offered   []string `json:"offered"`
	AnyExcept string   `json:"anyExcept,omitempty"`
	Satisfied bool     `json:"satisfied"`
}

// TypeFit is an instance type that would hold the pod, at its cheapest allowed offering.
type TypeFit struct {
	Name         string  `json:"name"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
}

// Pod explains pod against the NodePools of in (as schedulinginput.Input builds it: each NodePool
// restricted to its instance types) and those of all that in leaves out, with the reason of
// excluded. in.Pods is ignored: the outcome is the simulation of pod alone on in's nodes.
func Pod(in *scheduling.Input, all []*v1.NodePool, excluded []scheduling.Reason, pod *corev1.Pod) (*PodReport, error) {
	r := &PodReport{Pod: pod.Namespace + "/" + pod.Name, NodeName: pod.Spec.NodeName, Requests: map[string]string{}}
	requests := scheduling.PodRequests(pod)
	for name, q := range requests {
		r.Requests[string(name)] = q.String()
	}
	terms, err := podTerms(pod)
	if err != nil {
		r.PodProblems = append(r.PodProblems, err.Error())
	}
	outcome, solverReasons, err := simulate(in, pod)
	if err != nil {
		return nil, err
	}
	r.Outcome = outcome
	r.Scheduling = schedulingNotes(in, pod)
	for _, reason := range solverReasons {
		if reason.NodePool == "" {
			r.PodProblems = append(r.PodProblems, fmt.Sprintf("%s: %s", reason.Code, reason.Message))
		}
	}
	inputPools := map[string]*v1.NodePool{}
	for _, np := range in.NodePools {
		inputPools[np.Name] = np
	}
	names := map[string]bool{}
	for _, np := range all {
		names[np.Name] = true
	}
	for name := range inputPools {
		names[name] = true
	}
	stored := map[string]*v1.NodePool{}
	for _, np := range all {
		stored[np.Name] = np
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		np, ok := inputPools[name]
		var unavailable *Problem
		if !ok {
			np = stored[name]
			unavailable = &Problem{Kind: ProblemUnavailable, Message: "the NodePool cannot launch now"}
			if i := slices.IndexFunc(excluded, func(e scheduling.Reason) bool { return e.NodePool == name }); i >= 0 {
				unavailable.Message = fmt.Sprintf("the NodePool cannot launch now (%s): %s", excluded[i].Code, excluded[i].Message)
			}
		}
		pr := explainPool(in, np, pod, terms, requests, ok)
		pr.Warnings = poolWarnings(stored[name], np)
		if len(pr.Problems) == 0 {
			// What this analysis does not model (pod affinity, topology spread) the simulation
			// does: its reason stands when nothing else was found.
			for _, reason := range solverReasons {
				if reason.NodePool == name {
					pr.Problems = append(pr.Problems, Problem{Kind: string(reason.Code), Message: "the scheduling simulation: " + reason.Message})
				}
			}
		}
		if unavailable != nil {
			pr.Problems = append([]Problem{*unavailable}, pr.Problems...)
		}
		pr.Fits = len(pr.Problems) == 0 && len(r.PodProblems) == 0
		r.NodePools = append(r.NodePools, pr)
	}
	return r, nil
}

// poolWarnings reads what matters to a pod waiting on the NodePool from its stored object (status
// included; nil when only the input has it) and its template.
func poolWarnings(stored, np *v1.NodePool) []Problem {
	var out []Problem
	if stored != nil {
		if c := meta.FindStatusCondition(stored.Status.Conditions, v1.ConditionTypeNodeRegistrationHealthy); c != nil && c.Status == metav1.ConditionFalse {
			out = append(out, Problem{Kind: WarningNodesNotJoining, Message: fmt.Sprintf("the NodePool's nodes fail to join: %s: %s", c.Reason, c.Message)})
		}
	}
	if ts := agenttaint.Undeclared(np.Spec.Template.Spec.Taints, np.Spec.Template.Spec.StartupTaints); len(ts) > 0 {
		out = append(out, Problem{Kind: WarningAgentTaint, Message: agenttaint.Advice(np.Name, "in its spec.template.spec.taints (move it to startupTaints)", ts)})
	}
	return out
}

// simulate runs the solver on the pod alone and says where it goes, with the solver's reasons
// (per NodePool, and "" for the pod itself) when it goes nowhere.
func simulate(in *scheduling.Input, pod *corev1.Pod) (string, []scheduling.Reason, error) {
	if pod.Spec.NodeName != "" {
		return "bound to node " + pod.Spec.NodeName, nil, nil
	}
	one := *in
	one.Pods = []*corev1.Pod{pod}
	plan, err := scheduling.Solve(&one)
	if err != nil {
		return "", nil, fmt.Errorf("simulating pod %s/%s, %w", pod.Namespace, pod.Name, err)
	}
	switch {
	case len(plan.Placements) > 0:
		return "fits on node " + plan.Placements[0].Node + " (an existing node, or a NodeClaim already launching): no new launch needed", nil, nil
	case len(plan.NodeClaims) > 0:
		nc := plan.NodeClaims[0]
		relaxed := ""
		if nc.MinValuesRelaxed {
			relaxed = ", minValues relaxed (--min-values-policy BestEffort): the NodePool's minValues cannot be met"
		}
		return fmt.Sprintf("would launch a NodeClaim of NodePool %s: %s in %s (%s) at $%.4f/h, %d instance-type options%s",
			nc.NodePool, nc.Launch.InstanceType, nc.Launch.Zone, nc.Launch.CapacityType, nc.Launch.Price, len(nc.InstanceTypes), relaxed), nil, nil
	}
	var reasons []scheduling.Reason
	for _, u := range plan.Unschedulable {
		reasons = append(reasons, u.Reasons...)
	}
	return "unschedulable: no existing node and no NodePool can take it (see each NodePool below)", reasons, nil
}

// podTerms returns the pod's node selection as alternatives: its nodeSelector ANDed with each
// required node-affinity term (terms are ORed), or the nodeSelector alone.
func podTerms(pod *corev1.Pod) ([]scheduling.Requirements, error) {
	base := scheduling.FromLabels(pod.Spec.NodeSelector)
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return []scheduling.Requirements{base}, nil
	}
	var out []scheduling.Requirements
	for i, term := range aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		rs, err := scheduling.FromNodeSelectorTerm(term)
		if err != nil {
			return []scheduling.Requirements{base}, fmt.Errorf("node affinity term %d, %w", i+1, err)
		}
		out = append(out, base.Merge(rs))
	}
	return out, nil
}

// candidate is one way a NodePool could launch: an instance type at one offering, with the labels
// the node would carry.
type candidate struct {
	it     *scheduling.InstanceType
	offer  scheduling.Offering
	labels map[string]string
}

// poolView is one NodePool as the analysis sees it: its requirements, the labels its nodes get
// from the template, and the (type, offering) pairs it can launch.
type poolView struct {
	in         *scheduling.Input
	np         *v1.NodePool
	reqs       scheduling.Requirements
	labels     map[string]string
	candidates []candidate
	withTypes  bool
}

// explainPool checks every constraint of the pod against one NodePool. withTypes is false for a
// NodePool that cannot launch now: its labels and taints are still checked, with no types.
func explainPool(in *scheduling.Input, np *v1.NodePool, pod *corev1.Pod, terms []scheduling.Requirements, requests corev1.ResourceList, withTypes bool) NodePoolReport {
	pr := NodePoolReport{Name: np.Name}
	for _, t := range agenttaint.Without(np.Spec.Template.Spec.Taints) {
		if t.Effect == corev1.TaintEffectPreferNoSchedule || tolerated(pod, t) {
			continue
		}
		pr.Problems = append(pr.Problems, Problem{Kind: ProblemTaint, Message: fmt.Sprintf("the pod does not tolerate the NodePool's taint %s", t.ToString())})
	}
	poolReqs, err := scheduling.FromNodePoolRequirements(np.Spec.Template.Spec.Requirements)
	if err != nil {
		pr.Problems = append(pr.Problems, Problem{Kind: ProblemInvalid, Message: err.Error()})
		return pr
	}
	v := &poolView{in: in, np: np, reqs: poolReqs, labels: maps.Clone(np.Spec.Template.Labels), withTypes: withTypes}
	if v.labels == nil {
		v.labels = map[string]string{}
	}
	v.labels[v1.NodePoolLabelKey] = np.Name
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		v.labels[v1.NodeClassLabelKey(ref)] = ref.Name
	}
	if withTypes {
		v.candidates = poolCandidates(in, poolReqs, v.labels)
	}
	fitting := map[string]TypeFit{}
	var termProblems [][]Problem
	for i, term := range terms {
		termNo := 0
		if len(terms) > 1 {
			termNo = i + 1
		}
		offers, problems := v.labelOffers(term, termNo)
		pr.Labels = append(pr.Labels, offers...)
		if len(problems) == 0 && withTypes {
			problems = v.fitTypes(term, termNo, requests, fitting)
		}
		termProblems = append(termProblems, problems)
	}
	// The pod fits when one term fits; otherwise every term's problems are reported.
	if !slices.ContainsFunc(termProblems, func(ps []Problem) bool { return len(ps) == 0 }) {
		for _, ps := range termProblems {
			pr.Problems = append(pr.Problems, ps...)
		}
	}
	types := slices.Collect(maps.Values(fitting))
	slices.SortFunc(types, func(a, b TypeFit) int { return cmp.Or(cmp.Compare(a.Price, b.Price), strings.Compare(a.Name, b.Name)) })
	pr.FittingTypes = len(types)
	pr.InstanceTypes = types[:min(len(types), MaxTypesShown)]
	if len(types) > 0 {
		if p := limitProblem(in, np, types); p != nil {
			pr.Problems = append(pr.Problems, *p)
		}
	}
	return pr
}

// labelOffers compares each label of one node-selection term with what the NodePool offers.
func (v *poolView) labelOffers(term scheduling.Requirements, termNo int) ([]LabelOffer, []Problem) {
	var offers []LabelOffer
	var problems []Problem
	for _, key := range slices.Sorted(maps.Keys(term)) {
		offer := offered(key, v.labels, v.reqs, v.candidates, v.withTypes, isTypeKey(v.in, key))
		offer.Term, offer.PodRequires = termNo, term[key].String()
		offer.Satisfied = satisfies(term[key], offer, v.reqs[key])
		offers = append(offers, offer)
		if !offer.Satisfied {
			problems = append(problems, Problem{Kind: ProblemLabel, Message: labelMessage(termNo, offer)})
		}
	}
	return offers, problems
}

// fitTypes adds to fitting the instance types that meet the term and hold the pod with the
// DaemonSet overhead, at their cheapest allowed offering, and says why there are none.
func (v *poolView) fitTypes(term scheduling.Requirements, termNo int, requests corev1.ResourceList, fitting map[string]TypeFit) []Problem {
	matched, found := 0, 0
	need := daemonOverhead(v.in, v.np, v.reqs, v.labels)
	addList(need, requests)
	for _, c := range v.candidates {
		if !term.Matches(c.labels) {
			continue
		}
		matched++
		if !fits(need, c.it.Allocatable) {
			continue
		}
		found++
		if cur, ok := fitting[c.it.Name]; !ok || c.offer.Price < cur.Price {
			fitting[c.it.Name] = TypeFit{Name: c.it.Name, Zone: c.offer.Zone, CapacityType: c.offer.CapacityType, Price: c.offer.Price}
		}
	}
	switch {
	case matched == 0:
		return []Problem{{Kind: ProblemNoType, Message: termPrefix(termNo) + "no instance type with an available offering meets the pod's and the NodePool's requirements together"}}
	case found == 0:
		return []Problem{{Kind: ProblemNoType, Message: termPrefix(termNo) + fmt.Sprintf("no compatible instance type has room for the pod's requests plus DaemonSet overhead (%s)", formatList(need))}}
	}
	return nil
}

func termPrefix(termNo int) string {
	if termNo == 0 {
		return ""
	}
	return fmt.Sprintf("node affinity term %d: ", termNo)
}

func labelMessage(termNo int, o LabelOffer) string {
	var offers string
	switch {
	case o.Offered != nil:
		offers = fmt.Sprintf("offers %s=%s", o.Key, strings.Join(o.Offered, ", "))
	case o.AnyExcept != "":
		offers = fmt.Sprintf("allows %s %s", o.Key, o.AnyExcept)
	default:
		offers = fmt.Sprintf("gives its nodes no label %s", o.Key)
	}
	return fmt.Sprintf("%sthe pod requires %s; the NodePool %s", termPrefix(termNo), o.PodRequires, offers)
}

// poolCandidates are the (instance type, available offering) pairs the NodePool allows, with the
// labels each node would carry.
func poolCandidates(in *scheduling.Input, poolReqs scheduling.Requirements, labels map[string]string) []candidate {
	var out []candidate
	for _, it := range in.InstanceTypes {
		for _, o := range it.Offerings {
			if !o.Available {
				continue
			}
			l := maps.Clone(it.Labels)
			if l == nil {
				l = map[string]string{}
			}
			l[corev1.LabelInstanceTypeStable] = it.Name
			l[corev1.LabelTopologyZone] = o.Zone
			if o.ZoneID != "" {
				l[awsv1.LabelTopologyZoneID] = o.ZoneID
			}
			l[v1.CapacityTypeLabelKey] = o.CapacityType
			maps.Copy(l, labels)
			// Keys the NodePool constrains but no type or template label defines are set at
			// launch from the requirement: they do not rule a type out.
			ok := true
			for k, r := range poolReqs {
				if v, has := l[k]; has && !r.Has(v) {
					ok = false
					break
				}
			}
			if ok {
				out = append(out, candidate{it: it, offer: o, labels: l})
			}
		}
	}
	return out
}

// offered is what the NodePool's nodes can carry for key: a template label, the values of the
// instance types and offerings it allows, or the values its requirement allows.
func offered(key string, labels map[string]string, poolReqs scheduling.Requirements, candidates []candidate, withTypes, typeKey bool) LabelOffer {
	o := LabelOffer{Key: key}
	if v, ok := labels[key]; ok {
		o.Offered = []string{v}
		return o
	}
	set := map[string]bool{}
	for _, c := range candidates {
		if v, ok := c.labels[key]; ok {
			set[v] = true
		}
	}
	if len(set) > 0 {
		o.Offered = slices.Sorted(maps.Keys(set))
		return o
	}
	r, ok := poolReqs[key]
	if !ok {
		if !withTypes && typeKey {
			o.AnyExcept = "(unknown: the NodePool's instance types could not be read)"
		}
		return o
	}
	if vals := r.Values(); vals != nil {
		o.Offered = vals
		return o
	}
	o.AnyExcept = "(" + r.String() + ")"
	return o
}

// isTypeKey reports whether instance types or their offerings give nodes the label key.
func isTypeKey(in *scheduling.Input, key string) bool {
	switch key {
	case corev1.LabelTopologyZone, awsv1.LabelTopologyZoneID, v1.CapacityTypeLabelKey, corev1.LabelInstanceTypeStable:
		return true
	}
	return slices.ContainsFunc(in.InstanceTypes, func(it *scheduling.InstanceType) bool {
		_, ok := it.Labels[key]
		return ok
	})
}

// satisfies reports whether some node the offer describes meets the pod's requirement.
func satisfies(podReq *scheduling.Requirement, o LabelOffer, poolReq *scheduling.Requirement) bool {
	switch {
	case o.Offered != nil:
		return slices.ContainsFunc(o.Offered, podReq.Has)
	case poolReq != nil:
		return podReq.Intersects(poolReq)
	case o.AnyExcept != "":
		return true // unknown: not held against the NodePool
	}
	return podReq.AllowsAbsent()
}

func tolerated(pod *corev1.Pod, t corev1.Taint) bool {
	return slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool {
		return tol.ToleratesTaint(klog.Background(), &t, false)
	})
}

// daemonOverhead sums the requests of the DaemonSet pods that would run on the NodePool's nodes:
// those tolerating its taints whose nodeSelector its labels and requirements allow.
func daemonOverhead(in *scheduling.Input, np *v1.NodePool, poolReqs scheduling.Requirements, labels map[string]string) corev1.ResourceList {
	nodeReqs := poolReqs.Merge(scheduling.FromLabels(labels))
	out := corev1.ResourceList{}
	for _, ds := range in.DaemonSetPods {
		ok := true
		for _, t := range agenttaint.Without(np.Spec.Template.Spec.Taints) {
			if t.Effect != corev1.TaintEffectPreferNoSchedule && !tolerated(ds, t) {
				ok = false
			}
		}
		if ok && nodeReqs.Intersects(scheduling.FromLabels(ds.Spec.NodeSelector)) == nil {
			addList(out, scheduling.PodRequests(ds))
		}
	}
	return out
}

func addList(dst, src corev1.ResourceList) {
	for name, q := range src {
		cur := dst[name]
		cur.Add(q)
		dst[name] = cur
	}
}

func fits(need, allocatable corev1.ResourceList) bool {
	for name, q := range need {
		if q.IsZero() {
			continue
		}
		alloc, ok := allocatable[name]
		if !ok || alloc.Cmp(q) < 0 {
			return false
		}
	}
	return true
}

func formatList(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	return strings.Join(parts, " ")
}

// limitProblem says when the NodePool's limits leave no room for the smallest fitting type: the
// capacity of its nodes (existing and in flight) plus that type's would exceed a limit.
func limitProblem(in *scheduling.Input, np *v1.NodePool, types []TypeFit) *Problem {
	if len(np.Spec.Limits) == 0 {
		return nil
	}
	used := corev1.ResourceList{}
	nodes := 0
	for _, n := range in.Nodes {
		if n.NodePool == np.Name {
			addList(used, n.Capacity)
			nodes++
		}
	}
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range in.InstanceTypes {
		byName[it.Name] = it
	}
	var blocked []string
	for _, name := range slices.Sorted(maps.Keys(np.Spec.Limits)) {
		limit := np.Spec.Limits[name]
		room := false
		var smallest *resource.Quantity
		for _, tf := range types {
			c, ok := byName[tf.Name].Capacity[name]
			if name == scheduling.ResourceNodes {
				c, ok = *resource.NewQuantity(1, resource.DecimalSI), true // each node counts one
				used[name] = *resource.NewQuantity(int64(nodes), resource.DecimalSI)
			}
			if !ok {
				room = true
				break
			}
			total := used[name].DeepCopy()
			total.Add(c)
			if total.Cmp(limit) <= 0 {
				room = true
				break
			}
			if smallest == nil || c.Cmp(*smallest) < 0 {
				smallest = &c
			}
		}
		if !room && smallest != nil {
			u := used[name]
			blocked = append(blocked, fmt.Sprintf("%s limit %s: %s in use by %d nodes, and the smallest fitting instance type adds %s",
				name, limit.String(), u.String(), nodes, smallest.String()))
		}
	}
	if len(blocked) == 0 {
		return nil
	}
	return &Problem{Kind: ProblemLimit, Message: strings.Join(blocked, "; ")}
}
