package console

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/controllers/provisioning"
	"github.com/joinerhq/joiner/pkg/explain"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// MaxExplained is how many groups of pending pods a Pending page explains (oldest first); the
// others are counted. Each explanation is a scheduling simulation, so the cap bounds the page's
// time.
const MaxExplained = 25

// state is what one read of the cluster holds.
type state struct {
	now        time.Time
	nodePools  []v1.NodePool
	nodeClaims []v1.NodeClaim
	nodes      []corev1.Node
	pods       []corev1.Pod
	// prices maps NodePool -> "type/zone/capacity type" -> hourly price; for a NodePool whose
	// instance types could not be read (priceErrors says why), the prices last read, or nil.
	prices      map[string]map[string]float64
	priceErrors map[string]string
}

func offeringKey(instanceType, zone, capacityType string) string {
	return instanceType + "/" + zone + "/" + capacityType
}

// read lists NodePools, NodeClaims, Nodes and pods, and the instance types' prices of each
// NodePool.
func (c *Console) read(ctx context.Context) (*state, error) {
	s := &state{now: c.clock.Now(), prices: map[string]map[string]float64{}, priceErrors: map[string]string{}}
	var nps v1.NodePoolList
	// The console never writes to what it lists, so it reads the cache's objects without copying
	// them (a direct client ignores the option).
	noCopy := client.UnsafeDisableDeepCopy
	if err := c.kube.List(ctx, &nps, noCopy); err != nil {
		return nil, fmt.Errorf("listing nodepools, %w", err)
	}
	var ncs v1.NodeClaimList
	if err := c.kube.List(ctx, &ncs, noCopy); err != nil {
		return nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	var nodes corev1.NodeList
	if err := c.kube.List(ctx, &nodes, noCopy); err != nil {
		return nil, fmt.Errorf("listing nodes, %w", err)
	}
	var pods corev1.PodList
	if err := c.kube.List(ctx, &pods, noCopy); err != nil {
		return nil, fmt.Errorf("listing pods, %w", err)
	}
	s.nodePools, s.nodeClaims, s.nodes, s.pods = nps.Items, ncs.Items, nodes.Items, pods.Items
	slices.SortFunc(s.nodePools, func(a, b v1.NodePool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range s.nodePools {
		np := &s.nodePools[i]
		if c.cloud == nil {
			s.priceErrors[np.Name] = "no cloud provider: prices unknown"
			continue
		}
		types, err := c.cloud.GetInstanceTypes(ctx, np)
		if err != nil {
			s.priceErrors[np.Name] = err.Error()
			// A NodeClaim launched before its class went not Ready (a node role unmapped, the
			// very case the console is for) still costs money: price it as last read.
			s.prices[np.Name] = c.lastPrices.get(np.Name)
			continue
		}
		m := map[string]float64{}
		for _, it := range types {
			for _, o := range it.Offerings {
				m[offeringKey(it.Name, o.Zone, o.CapacityType)] = o.Price
			}
		}
		s.prices[np.Name] = m
	}
	c.lastPrices.keep(s.prices)
	return s, nil
}

// priceMemory is the offerings' prices of each NodePool as last read, for the NodePools whose
// instance types cannot be read now. It holds only NodePools that exist (keep drops the others).
type priceMemory struct {
	mu     sync.Mutex
	prices map[string]map[string]float64
}

func (m *priceMemory) get(nodePool string) map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.prices[nodePool]
}

// keep remembers prices, which maps every NodePool that exists to its prices (nil: unknown).
func (m *priceMemory) keep(prices map[string]map[string]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := make(map[string]map[string]float64, len(prices))
	for np, p := range prices {
		if p == nil {
			p = m.prices[np]
		}
		if p != nil {
			next[np] = p
		}
	}
	m.prices = next
}

// price is the hourly price of the NodeClaim's launched offering, from its labels.
func (s *state) price(nc *v1.NodeClaim) (float64, bool) {
	m := s.prices[nc.Labels[v1.NodePoolLabelKey]]
	p, ok := m[offeringKey(nc.Labels[corev1.LabelInstanceTypeStable], nc.Labels[corev1.LabelTopologyZone], nc.Labels[v1.CapacityTypeLabelKey])]
	return p, ok
}

// launched says whether the NodeClaim has an instance (its Launched condition is True).
func launched(nc *v1.NodeClaim) bool {
	return meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched)
}

// joinFailed says whether the NodeClaim's node failed to join: Registered=False.
func joinFailed(nc *v1.NodeClaim) *metav1.Condition {
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeRegistered)
	if c != nil && c.Status == metav1.ConditionFalse {
		return c
	}
	return nil
}

func pending(p *corev1.Pod) bool {
	return p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// Overview is the Overview page.
type Overview struct {
	CostPerHour  float64    `json:"costPerHour"`
	Costs        []CostLine `json:"costs"`
	Unpriced     []string   `json:"unpriced,omitempty"`
	Nodes        int        `json:"nodes"`
	Pods         int        `json:"pods"`
	PendingPods  int        `json:"pendingPods"`
	NodeClaims   int        `json:"nodeClaims"`
	FailedJoins  int        `json:"failedJoins"`
	NodePoolRows []PoolRow  `json:"nodePools"`
	// History is the cost per hour RecordCost sampled; nil before its first sample.
	History *CostTrend `json:"history,omitempty"`
}

// CostLine is the hourly cost of one NodePool's launched NodeClaims of one capacity type.
type CostLine struct {
	NodePool     string  `json:"nodePool"`
	CapacityType string  `json:"capacityType"`
	NodeClaims   int     `json:"nodeClaims"`
	PerHour      float64 `json:"perHour"`
}

// PoolRow is one NodePool's health on the Overview.
type PoolRow struct {
	Name string `json:"name"`
	// Conditions that are not True (NodeRegistrationHealthy=False above all), as "Type=Status: reason: message".
	Problems []string `json:"problems,omitempty"`
}

func (s *state) overview() *Overview {
	o := &Overview{Nodes: len(s.nodes), NodeClaims: len(s.nodeClaims)}
	lines := map[[2]string]*CostLine{}
	for i := range s.nodeClaims {
		nc := &s.nodeClaims[i]
		if joinFailed(nc) != nil {
			o.FailedJoins++
		}
		if !launched(nc) {
			continue
		}
		p, ok := s.price(nc)
		if !ok {
			o.Unpriced = append(o.Unpriced, nc.Name)
			continue
		}
		k := [2]string{nc.Labels[v1.NodePoolLabelKey], nc.Labels[v1.CapacityTypeLabelKey]}
		if lines[k] == nil {
			lines[k] = &CostLine{NodePool: k[0], CapacityType: k[1]}
		}
		lines[k].NodeClaims++
		lines[k].PerHour += p
		o.CostPerHour += p
	}
	for _, l := range lines {
		o.Costs = append(o.Costs, *l)
	}
	slices.SortFunc(o.Costs, func(a, b CostLine) int {
		return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	for i := range s.pods {
		if terminal(&s.pods[i]) {
			continue
		}
		o.Pods++
		if pending(&s.pods[i]) {
			o.PendingPods++
		}
	}
	for i := range s.nodePools {
		np := &s.nodePools[i]
		row := PoolRow{Name: np.Name}
		for _, c := range np.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				row.Problems = append(row.Problems, conditionText(c))
			}
		}
		if e := s.priceErrors[np.Name]; e != "" {
			row.Problems = append(row.Problems, "instance types: "+e)
		}
		o.NodePoolRows = append(o.NodePoolRows, row)
	}
	return o
}

func conditionText(c metav1.Condition) string {
	return strings.TrimSuffix(fmt.Sprintf("%s=%s: %s: %s", c.Type, c.Status, c.Reason, c.Message), ": ")
}

// NodeGroup is the nodes of one NodePool ("" for nodes of none).
type NodeGroup struct {
	NodePool string    `json:"nodePool"`
	Nodes    []NodeRow `json:"nodes"`
}

// NodeRow is one node on the Nodes page.
type NodeRow struct {
	Name         string  `json:"name"`
	InstanceType string  `json:"instanceType"`
	CapacityType string  `json:"capacityType"`
	Zone         string  `json:"zone"`
	Price        float64 `json:"price"`
	Priced       bool    `json:"priced"`
	Age          string  `json:"age"`
	Pods         int     `json:"pods"`
	CPU          Usage   `json:"cpu"`
	Memory       Usage   `json:"memory"`
	// Disruption is deleting, disrupting, candidate, blocked or kept; Reason says why.
	Disruption string `json:"disruption"`
	Reason     string `json:"reason,omitempty"`
}

// Usage is the requests of a node's pods against its allocatable, for one resource.
type Usage struct {
	Requested   string `json:"requested"`
	Allocatable string `json:"allocatable"`
	Percent     int    `json:"percent"`
}

func (s *state) nodeGroups() []NodeGroup {
	type req struct {
		cpu, mem int64
		pods     int
		blocker  string
	}
	byNode := map[string]*req{}
	for i := range s.pods {
		p := &s.pods[i]
		if p.Spec.NodeName == "" || terminal(p) {
			continue
		}
		r := byNode[p.Spec.NodeName]
		if r == nil {
			r = &req{}
			byNode[p.Spec.NodeName] = r
		}
		l := scheduling.PodRequests(p)
		r.cpu += l.Cpu().MilliValue()
		r.mem += l.Memory().Value()
		r.pods++
		if protected, _, _ := v1.PodDoNotDisrupt(p, s.now); r.blocker == "" && protected && p.DeletionTimestamp == nil {
			r.blocker = "pod " + p.Namespace + "/" + p.Name + " has " + v1.DoNotDisruptAnnotationKey
		}
	}
	claims := map[string]*v1.NodeClaim{}
	for i := range s.nodeClaims {
		nc := &s.nodeClaims[i]
		if nc.Status.ProviderID != "" {
			claims[nc.Status.ProviderID] = nc
		}
	}
	groups := map[string]*NodeGroup{}
	for i := range s.nodes {
		n := &s.nodes[i]
		r := byNode[n.Name]
		if r == nil {
			r = &req{}
		}
		row := NodeRow{
			Name: n.Name, InstanceType: n.Labels[corev1.LabelInstanceTypeStable], CapacityType: n.Labels[v1.CapacityTypeLabelKey],
			Zone: n.Labels[corev1.LabelTopologyZone], Age: age(s.now.Sub(n.CreationTimestamp.Time)), Pods: r.pods,
			CPU:    usage(r.cpu, n.Status.Allocatable.Cpu().MilliValue(), milliCPU),
			Memory: usage(r.mem, n.Status.Allocatable.Memory().Value(), gib),
		}
		nc := claims[n.Spec.ProviderID]
		if nc != nil {
			row.Price, row.Priced = s.price(nc)
		}
		row.Disruption, row.Reason = disruptionState(n, nc, r.blocker)
		pool := n.Labels[v1.NodePoolLabelKey]
		if groups[pool] == nil {
			groups[pool] = &NodeGroup{NodePool: pool}
		}
		groups[pool].Nodes = append(groups[pool].Nodes, row)
	}
	out := make([]NodeGroup, 0, len(groups))
	for _, g := range groups {
		slices.SortFunc(g.Nodes, func(a, b NodeRow) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b NodeGroup) int { return cmp.Compare(a.NodePool, b.NodePool) })
	return out
}

// nodeDoNotDisrupt reports whether karpenter.sh/do-not-disrupt protects the Node or its
// NodeClaim (only "true" does there).
func nodeDoNotDisrupt(n *corev1.Node, nc *v1.NodeClaim) bool {
	node, _ := v1.ObjectDoNotDisrupt(n.Annotations)
	claim, _ := v1.ObjectDoNotDisrupt(nc.Annotations)
	return node || claim
}

// disruptionState reads what the disruption controller left on the node and its NodeClaim. It
// does not run a disruption pass: `joiner explain node` does, for one node.
func disruptionState(n *corev1.Node, nc *v1.NodeClaim, podBlocker string) (string, string) {
	switch {
	case n.DeletionTimestamp != nil || (nc != nil && nc.DeletionTimestamp != nil):
		return "deleting", "the node or its NodeClaim is being deleted"
	case slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == v1.DisruptedTaintKey }):
		return "disrupting", "tainted " + v1.DisruptedTaintKey + ": being drained"
	case nc == nil:
		return "unmanaged", "no NodeClaim has this node's providerID"
	case nodeDoNotDisrupt(n, nc):
		return "blocked", "the node has " + v1.DoNotDisruptAnnotationKey
	}
	var why []string
	for _, t := range []string{v1.ConditionTypeDrifted, v1.ConditionTypeConsolidatable} {
		if meta.IsStatusConditionTrue(nc.Status.Conditions, t) {
			why = append(why, t)
		}
	}
	if len(why) == 0 {
		return "kept", "neither Drifted nor Consolidatable"
	}
	if podBlocker != "" {
		return "blocked", strings.Join(why, ", ") + ", but " + podBlocker
	}
	return "candidate", strings.Join(why, ", ")
}

const (
	milliCPU = iota
	gib
)

func usage(requested, allocatable int64, unit int) Usage {
	u := Usage{}
	if allocatable > 0 {
		u.Percent = int(min(100, requested*100/allocatable))
	}
	switch unit {
	case milliCPU:
		u.Requested, u.Allocatable = fmt.Sprintf("%.2f", float64(requested)/1000), fmt.Sprintf("%.2f", float64(allocatable)/1000)
	default:
		u.Requested, u.Allocatable = fmt.Sprintf("%.1fGi", float64(requested)/(1<<30)), fmt.Sprintf("%.1fGi", float64(allocatable)/(1<<30))
	}
	return u
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Pending is the Pending pods page.
type Pending struct {
	Total int `json:"total"`
	// Groups are the pending pods grouped by what scheduling reads of them (requests, node
	// selection, tolerations, spread), oldest group first; the first MaxExplained are explained.
	Groups []PendingGroup `json:"groups"`
	// Unexplained counts the groups beyond MaxExplained.
	Unexplained int `json:"unexplained,omitempty"`
	// Error says why the pods could not be explained (the instance types could not be read).
	Error string `json:"error,omitempty"`
}

// PendingGroup is pending pods that scheduling cannot tell apart, and the report of the oldest.
type PendingGroup struct {
	Pods   []string           `json:"pods"`
	Report *explain.PodReport `json:"report,omitempty"`
}

// schedulingShape is what the scheduling simulation reads of a pod; pods of equal shape get the
// same explanation.
func schedulingShape(p *corev1.Pod) string {
	b, _ := json.Marshal(struct { // plain API types: Marshal cannot fail
		Requests    corev1.ResourceList
		Selector    map[string]string
		Affinity    *corev1.Affinity
		Tolerations []corev1.Toleration
		Spread      []corev1.TopologySpreadConstraint
		Namespace   string
		Labels      map[string]string
	}{scheduling.PodRequests(p), p.Spec.NodeSelector, p.Spec.Affinity, p.Spec.Tolerations, p.Spec.TopologySpreadConstraints, p.Namespace, p.Labels})
	return string(b)
}

// pending lists the pods only: schedulinginput.Input reads the rest of the cluster itself.
func (c *Console) pending(ctx context.Context) (*Pending, error) {
	var list corev1.PodList
	if err := c.kube.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods, %w", err)
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		if pending(&list.Items[i]) {
			pods = append(pods, &list.Items[i])
		}
	}
	out := &Pending{Total: len(pods)}
	if len(pods) == 0 {
		return out, nil
	}
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	// Labels are part of the shape because spread and affinity select pods by them; pods of one
	// ReplicaSet differ only in pod-template-hash-free labels, so they still group.
	index := map[string]int{}
	var firsts []*corev1.Pod
	for _, p := range pods {
		k := schedulingShape(p)
		i, ok := index[k]
		if !ok {
			i = len(out.Groups)
			index[k] = i
			out.Groups = append(out.Groups, PendingGroup{})
			firsts = append(firsts, p)
		}
		out.Groups[i].Pods = append(out.Groups[i].Pods, p.Namespace+"/"+p.Name)
	}
	if len(firsts) > MaxExplained {
		out.Unexplained = len(firsts) - MaxExplained
		firsts = firsts[:MaxExplained]
	}
	if c.cloud == nil {
		out.Error = "no cloud provider: the console cannot read instance types to explain pods"
		return out, nil
	}
	// The pods may be the cache's own objects (read without a deep copy): the simulation gets copies.
	for i, p := range firsts {
		firsts[i] = p.DeepCopy()
	}
	view := cluster.New(c.kube, false)
	in, excluded, err := schedulinginput.Input(ctx, view, c.cloud, firsts, provisioning.JoinFailureHold(c.kube, c.cloud, c.clock.Now, joinfailure.DefaultHold))
	if err != nil {
		out.Error = fmt.Sprintf("reading the cluster, %v", err)
		return out, nil
	}
	all, err := view.NodePools(ctx)
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	for i, p := range firsts {
		r, err := explain.Pod(in, all, excluded, p)
		if err != nil {
			r = &explain.PodReport{Pod: p.Namespace + "/" + p.Name, PodProblems: []string{err.Error()}}
		}
		out.Groups[i].Report = r
	}
	return out, nil
}

// ClaimRow is one NodeClaim with its report and price.
type ClaimRow struct {
	Report *explain.NodeClaimReport `json:"report"`
	Failed bool                     `json:"failed"`
	Price  float64                  `json:"price"`
	Priced bool                     `json:"priced"`
	Age    string                   `json:"age"`
}

func (s *state) claims() []ClaimRow {
	nodes := map[string]*corev1.Node{}
	for i := range s.nodes {
		if id := s.nodes[i].Spec.ProviderID; id != "" {
			nodes[id] = &s.nodes[i]
		}
	}
	out := make([]ClaimRow, 0, len(s.nodeClaims))
	for i := range s.nodeClaims {
		nc := &s.nodeClaims[i]
		var node *corev1.Node
		if nc.Status.ProviderID != "" {
			node = nodes[nc.Status.ProviderID]
		}
		row := ClaimRow{Report: explain.NodeClaim(nc.Name, nc, node, nil), Failed: joinFailed(nc) != nil, Age: age(s.now.Sub(nc.CreationTimestamp.Time))}
		row.Price, row.Priced = s.price(nc)
		out = append(out, row)
	}
	// Failed joins first, then by name.
	slices.SortStableFunc(out, func(a, b ClaimRow) int {
		if a.Failed != b.Failed {
			if a.Failed {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Report.Name, b.Report.Name)
	})
	return out
}

// NodeClassRow is one EC2NodeClass and its conditions, NodeJoinReady first.
type NodeClassRow struct {
	Name       string             `json:"name"`
	Role       string             `json:"role,omitempty"`
	Ready      string             `json:"ready"`
	Conditions []metav1.Condition `json:"conditions"`
}

func (c *Console) nodeClasses(ctx context.Context) ([]NodeClassRow, error) {
	var list awsv1.EC2NodeClassList
	if err := c.kube.List(ctx, &list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ec2nodeclasses, %w", err)
	}
	out := make([]NodeClassRow, 0, len(list.Items))
	for i := range list.Items {
		nc := &list.Items[i]
		row := NodeClassRow{Name: nc.Name, Role: nc.Spec.Role, Ready: string(metav1.ConditionUnknown), Conditions: slices.Clone(nc.Status.Conditions)}
		if c := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady); c != nil {
			row.Ready = string(c.Status)
		}
		slices.SortStableFunc(row.Conditions, func(a, b metav1.Condition) int {
			ra, rb := a.Type != awsv1.ConditionTypeNodeJoinReady, b.Type != awsv1.ConditionTypeNodeJoinReady
			if ra != rb {
				if !ra {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.Type, b.Type)
		})
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b NodeClassRow) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
