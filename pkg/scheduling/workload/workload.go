package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// File is one workload document.
type File struct {
	Description   string         `json:"description"`
	InstanceTypes []InstanceType `json:"instanceTypes"`
	NodePools     []NodePool     `json:"nodePools"`
	Pods          []PodGroup     `json:"pods"`
}

// InstanceType is a catalogue entry; see shared/bench/README.md for the meaning of each field.
type InstanceType struct {
	Name          string            `json:"name"`
	CPU           float64           `json:"cpu"`
	MemoryMiB     int64             `json:"memoryMiB"`
	Pods          int64             `json:"pods"`
	Arch          string            `json:"arch"`
	OS            []string          `json:"os"`
	Zones         []string          `json:"zones"`
	CapacityTypes []string          `json:"capacityTypes"`
	Price         float64           `json:"price"`
	SpotPrice     *float64          `json:"spotPrice"`
	Labels        map[string]string `json:"labels"`
	Overhead      struct {
		CPUMilli  int64 `json:"cpuMilli"`
		MemoryMiB int64 `json:"memoryMiB"`
	} `json:"overhead"`
}

// Requirement is a node selector requirement.
type Requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// NodePool is a simplified NodePool.
type NodePool struct {
	Name         string            `json:"name"`
	Weight       int32             `json:"weight"`
	Requirements []Requirement     `json:"requirements"`
	Labels       map[string]string `json:"labels"`
	Taints       []corev1.Taint    `json:"taints"`
	Limits       *struct {
		CPU       *float64 `json:"cpu"`
		MemoryMiB *int64   `json:"memoryMiB"`
	} `json:"limits"`
}

// TopologySpread is a spread constraint; defaults are maxSkew 1, DoNotSchedule, the pod's labels.
type TopologySpread struct {
	TopologyKey       string            `json:"topologyKey"`
	MaxSkew           int32             `json:"maxSkew"`
	WhenUnsatisfiable string            `json:"whenUnsatisfiable"`
	MatchLabels       map[string]string `json:"matchLabels"`
}

// AffinityTerm is a pod (anti-)affinity term; weight 0 is required, >0 preferred.
type AffinityTerm struct {
	TopologyKey string            `json:"topologyKey"`
	Weight      int32             `json:"weight"`
	MatchLabels map[string]string `json:"matchLabels"`
}

// PodGroup is count identical pods.
type PodGroup struct {
	Name            string              `json:"name"`
	Count           int                 `json:"count"`
	Namespace       string              `json:"namespace"`
	CPUMilli        int64               `json:"cpuMilli"`
	MemoryMiB       int64               `json:"memoryMiB"`
	Labels          map[string]string   `json:"labels"`
	NodeSelector    map[string]string   `json:"nodeSelector"`
	NodeAffinity    []Requirement       `json:"nodeAffinity"`
	Tolerations     []corev1.Toleration `json:"tolerations"`
	TopologySpread  []TopologySpread    `json:"topologySpread"`
	PodAffinity     []AffinityTerm      `json:"podAffinity"`
	PodAntiAffinity []AffinityTerm      `json:"podAntiAffinity"`
}

// Read decodes a workload document.
func Read(r io.Reader) (*File, error) {
	var f File
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("decoding workload, %w", err)
	}
	return &f, nil
}

// Load reads the workload file at path.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening workload, %w", err)
	}
	defer func() { _ = fh.Close() }()
	return Read(fh)
}

const mib = 1 << 20

// MaxPods caps the pods one document may ask for, the counts of all its groups together: Input
// builds every pod up front, so an unbounded count (2^40) would exhaust memory before any error.
// The shared benchmarks hold at most 2,000; a cluster's worth of pods is well under the cap.
const MaxPods = 100_000

// Catalogue returns the document's instance types, for files used only as a catalogue
// (`joiner simulate --instance-types`).
func (f *File) Catalogue() []*scheduling.InstanceType {
	out := make([]*scheduling.InstanceType, 0, len(f.InstanceTypes))
	for i := range f.InstanceTypes {
		out = append(out, f.InstanceTypes[i].convert())
	}
	return out
}

// Input converts the document into a scheduling input. Pods are fresh objects on every call.
func (f *File) Input() (*scheduling.Input, error) {
	in := &scheduling.Input{InstanceTypes: f.Catalogue()}
	pools := f.NodePools
	if len(pools) == 0 {
		pools = []NodePool{{Name: "default"}}
	}
	for i := range pools {
		in.NodePools = append(in.NodePools, pools[i].convert())
	}
	if err := f.checkCounts(); err != nil {
		return nil, err
	}
	for i := range f.Pods {
		pods, err := f.Pods[i].convert()
		if err != nil {
			return nil, err
		}
		in.Pods = append(in.Pods, pods...)
	}
	return in, nil
}

// checkCounts refuses a document whose groups together ask for more than MaxPods pods, naming
// the group whose count crosses the cap.
func (f *File) checkCounts() error {
	total := 0
	for i, g := range f.Pods {
		if max(g.Count, 1) > MaxPods-total {
			return fmt.Errorf("pods[%d].count %d (group %q) brings the workload over %d pods: lower the count, or split the workload into several files", i, g.Count, g.Name, MaxPods)
		}
		total += max(g.Count, 1)
	}
	return nil
}

func (it *InstanceType) convert() *scheduling.InstanceType {
	labels := maps.Clone(it.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelArchStable] = it.Arch
	osName := "linux"
	if len(it.OS) > 0 {
		osName = it.OS[0] // labels are single-valued; the catalogue lists one OS per type
	}
	labels[corev1.LabelOSStable] = osName
	cpuMilli := int64(it.CPU * 1000)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(it.MemoryMiB*mib, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(it.Pods, resource.DecimalSI),
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpuMilli-it.Overhead.CPUMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity((it.MemoryMiB-it.Overhead.MemoryMiB)*mib, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(it.Pods, resource.DecimalSI),
	}
	cts := it.CapacityTypes
	if len(cts) == 0 {
		cts = []string{v1.CapacityTypeOnDemand}
	}
	out := &scheduling.InstanceType{Name: it.Name, Labels: labels, Capacity: capacity, Allocatable: alloc}
	for _, z := range it.Zones {
		for _, ct := range cts {
			price := it.Price
			if ct == v1.CapacityTypeSpot && it.SpotPrice != nil {
				price = *it.SpotPrice
			}
			out.Offerings = append(out.Offerings, scheduling.Offering{Zone: z, CapacityType: ct, Price: price, Available: true})
		}
	}
	return out
}

func (np *NodePool) convert() *v1.NodePool {
	out := &v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: np.Name}}
	if np.Weight > 0 {
		out.Spec.Weight = new(np.Weight)
	}
	out.Spec.Template.Labels = maps.Clone(np.Labels)
	out.Spec.Template.Spec.Taints = slices.Clone(np.Taints)
	out.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	for _, r := range np.Requirements {
		out.Spec.Template.Spec.Requirements = append(out.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
			Key: r.Key, Operator: v1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	if np.Limits != nil {
		out.Spec.Limits = v1.Limits{}
		if np.Limits.CPU != nil {
			out.Spec.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(*np.Limits.CPU*1000), resource.DecimalSI)
		}
		if np.Limits.MemoryMiB != nil {
			out.Spec.Limits[corev1.ResourceMemory] = *resource.NewQuantity(*np.Limits.MemoryMiB*mib, resource.BinarySI)
		}
	}
	return out
}

func (g *PodGroup) convert() ([]*corev1.Pod, error) {
	ns := g.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	template := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: g.Labels}}
	template.Spec.NodeSelector = g.NodeSelector
	template.Spec.Tolerations = g.Tolerations
	template.Spec.Containers = []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(g.CPUMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(g.MemoryMiB*mib, resource.BinarySI),
	}}}}
	own := func(m map[string]string) *metav1.LabelSelector {
		if m == nil {
			m = g.Labels
		}
		return &metav1.LabelSelector{MatchLabels: m}
	}
	for _, ts := range g.TopologySpread {
		skew := ts.MaxSkew
		if skew == 0 {
			skew = 1
		}
		when := corev1.DoNotSchedule
		if ts.WhenUnsatisfiable != "" {
			when = corev1.UnsatisfiableConstraintAction(ts.WhenUnsatisfiable)
		}
		template.Spec.TopologySpreadConstraints = append(template.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			TopologyKey: ts.TopologyKey, MaxSkew: skew, WhenUnsatisfiable: when, LabelSelector: own(ts.MatchLabels)})
	}
	aff := &corev1.Affinity{}
	if len(g.NodeAffinity) > 0 {
		term := corev1.NodeSelectorTerm{}
		for _, r := range g.NodeAffinity {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
		}
		aff.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}
	}
	if len(g.PodAffinity) > 0 {
		aff.PodAffinity = &corev1.PodAffinity{}
		aff.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, aff.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = terms(g.PodAffinity, own)
	}
	if len(g.PodAntiAffinity) > 0 {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{}
		aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = terms(g.PodAntiAffinity, own)
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		template.Spec.Affinity = aff
	}
	count := g.Count
	if count <= 0 {
		count = 1
	}
	if g.Count > 0 && g.Name == "" {
		return nil, fmt.Errorf("converting pod group, a group with count %d has no name", g.Count)
	}
	pods := make([]*corev1.Pod, count)
	for i := range count {
		p := template.DeepCopy()
		p.Name = g.Name
		if g.Count > 0 {
			p.Name = g.Name + "-" + strconv.Itoa(i)
		}
		pods[i] = p
	}
	return pods, nil
}

func terms(in []AffinityTerm, own func(map[string]string) *metav1.LabelSelector) ([]corev1.PodAffinityTerm, []corev1.WeightedPodAffinityTerm) {
	var req []corev1.PodAffinityTerm
	var pref []corev1.WeightedPodAffinityTerm
	for _, t := range in {
		term := corev1.PodAffinityTerm{TopologyKey: t.TopologyKey, LabelSelector: own(t.MatchLabels)}
		if t.Weight > 0 {
			pref = append(pref, corev1.WeightedPodAffinityTerm{Weight: t.Weight, PodAffinityTerm: term})
		} else {
			req = append(req, term)
		}
	}
	return req, pref
}

// Summary is the JSON object `joiner simulate --workload FILE -o json` prints.
type Summary struct {
	PodsScheduled int `json:"podsScheduled"`
	PodsFailed    int `json:"podsFailed"`
	Nodes         int `json:"nodes"`
	// TotalHourlyPrice is the instances' price alone (the bench schema's figure).
	TotalHourlyPrice float64 `json:"totalHourlyPrice"`
	// TotalHourlyNodeCost is what the new nodes cost per hour beyond their instances (root
	// volumes, per-node costs), and TotalHourlyCost the sum of both.
	TotalHourlyNodeCost float64        `json:"totalHourlyNodeCost"`
	TotalHourlyCost     float64        `json:"totalHourlyCost"`
	InstanceTypesChosen map[string]int `json:"instanceTypesChosen"`
	SchedulingSeconds   float64        `json:"schedulingSeconds"`
	// PodsOnExistingNodes counts the scheduled pods placed on existing nodes.
	PodsOnExistingNodes int `json:"podsOnExistingNodes"`
}

// Summarize reduces a plan to its Summary; seconds is the measured time of the solve.
func Summarize(plan *scheduling.Plan, seconds float64) Summary {
	s := Summary{InstanceTypesChosen: map[string]int{}, SchedulingSeconds: seconds, Nodes: len(plan.NodeClaims),
		PodsFailed: len(plan.Unschedulable), PodsOnExistingNodes: len(plan.Placements)}
	s.PodsScheduled = len(plan.Placements)
	for i := range plan.NodeClaims {
		nc := &plan.NodeClaims[i]
		s.PodsScheduled += len(nc.Pods)
		s.TotalHourlyPrice += nc.Launch.Price
		s.TotalHourlyNodeCost += nc.NodeCost
		s.InstanceTypesChosen[nc.Launch.InstanceType]++
	}
	s.TotalHourlyCost = s.TotalHourlyPrice + s.TotalHourlyNodeCost
	return s
}
