package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// pairingGrace is how long a live instance may go without its NodeClaim (or a NodeClaim name a
// gone instance, or two live instances carry one NodeClaim's tag) before the sampler calls it a
// leak: the controller's garbage-collection grace, plus a minute for the collector's period and
// the controller's restarts under the kills.
const pairingGrace = instance.GarbageCollectionGrace + time.Minute

// idleGrace is how long an initialized NodeClaim of a NodePool under test may run no pod of the
// namespace, while none of them is pending, before the sampler calls it bought for pods another
// NodeClaim serves: the scheduler binds within seconds.
const idleGrace = 45 * time.Second

// sampler checks the invariants every second while the run goes on. A check that fails keeps
// its first message; the API server's or the emulator's unavailability (a restart) only skips
// the sample.
type sampler struct {
	stack     *localstack.Stack
	namespace string

	mu sync.Mutex
	// pdb arms the PodDisruptionBudget check (once every pod was Ready); idle the duplicate
	// check (while consolidation is off, so an idle node is one bought twice).
	pdb, idle bool
	samples   int
	skipped   int
	checks    map[string]int
	since     map[string]time.Time
	failures  []string
	failed    map[string]bool
}

func newSampler(stack *localstack.Stack, namespace string) *sampler {
	return &sampler{stack: stack, namespace: namespace, checks: map[string]int{}, since: map[string]time.Time{}, failed: map[string]bool{}}
}

func (s *sampler) arm(pdb, idle bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pdb, s.idle = pdb, idle
}

// run samples every second until ctx ends.
func (s *sampler) run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		snap, err := s.snapshot(ctx)
		s.mu.Lock()
		if err != nil {
			s.skipped++
		} else {
			s.samples++
			s.check(snap, time.Now())
		}
		s.mu.Unlock()
	}
}

// snapshot is one sample of the cluster and the cloud.
type snapshot struct {
	claims    []v1.NodeClaim
	instances []localstack.Instance
	pods      []corev1.Pod
	pdbs      []policyv1.PodDisruptionBudget
	deploys   []appsv1.Deployment
}

func (s *sampler) snapshot(ctx context.Context) (*snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var snap snapshot
	var claims v1.NodeClaimList
	var pods corev1.PodList
	var pdbs policyv1.PodDisruptionBudgetList
	var deploys appsv1.DeploymentList
	// The instances first: an instance launched after the NodeClaims were listed would look
	// leaked; one listed before has its NodeClaim already.
	instances, err := s.stack.Instances(ctx)
	if err != nil {
		return nil, err
	}
	c := s.stack.Client
	for _, l := range []struct {
		list client.ObjectList
		opts []client.ListOption
	}{{&claims, nil}, {&pods, []client.ListOption{client.InNamespace(s.namespace)}}, {&pdbs, []client.ListOption{client.InNamespace(s.namespace)}}, {&deploys, []client.ListOption{client.InNamespace(s.namespace)}}} {
		if err := c.List(ctx, l.list, l.opts...); err != nil {
			return nil, err
		}
	}
	snap.claims, snap.instances, snap.pods, snap.pdbs, snap.deploys = claims.Items, instances, pods.Items, pdbs.Items, deploys.Items
	return &snap, nil
}

// check runs every invariant on one sample; s.mu is held.
func (s *sampler) check(snap *snapshot, now time.Time) {
	violations := map[string]string{}
	s.checkPairing(snap, violations)
	s.checkLaunchedOnce(snap)
	if s.idle {
		s.checkIdle(snap, now, violations)
	}
	if s.pdb {
		s.checkPDBs(snap)
	}
	for key, what := range violations {
		grace := pairingGrace
		if strings.HasPrefix(key, "idle/") {
			grace = 0 // checkIdle waited idleGrace already
		}
		first, ok := s.since[key]
		if !ok {
			s.since[key] = now
			first = now
		}
		if now.Sub(first) >= grace {
			s.fail(key, fmt.Sprintf("%s, for %s", what, now.Sub(first).Round(time.Second)))
		}
	}
	for key := range s.since {
		if _, ok := violations[key]; !ok {
			delete(s.since, key)
		}
	}
}

func (s *sampler) fail(key, what string) {
	if s.failed[key] {
		return
	}
	s.failed[key] = true
	s.failures = append(s.failures, time.Now().UTC().Format("15:04:05")+" "+what)
}

// checkPairing: every live instance is named by a NodeClaim, every NodeClaim's instance is live,
// no two live instances carry one NodeClaim's tag.
func (s *sampler) checkPairing(snap *snapshot, violations map[string]string) {
	live := map[string]localstack.Instance{}
	tagged := map[string][]string{}
	for _, i := range snap.instances {
		if i.Live() {
			live[i.ID] = i
			name := i.Tags[awsv1.TagKeyNodeClaim]
			tagged[name] = append(tagged[name], i.ID)
		}
	}
	named := map[string]string{}
	for _, nc := range snap.claims {
		s.checks["pairing"]++
		if nc.Status.ProviderID == "" {
			continue
		}
		id := nc.Status.ProviderID[strings.LastIndex(nc.Status.ProviderID, "/")+1:]
		named[id] = nc.Name
		if _, ok := live[id]; !ok && nc.DeletionTimestamp == nil {
			violations["gone/"+nc.Name] = fmt.Sprintf("nodeclaim %s names instance %s, which is not live", nc.Name, id)
		}
		if ids := tagged[nc.Name]; len(ids) > 1 {
			violations["twice/"+nc.Name] = fmt.Sprintf("nodeclaim %s has %d live instances %v", nc.Name, len(ids), ids)
		}
	}
	for id, i := range live {
		s.checks["pairing"]++
		if _, ok := named[id]; !ok {
			violations["leaked/"+id] = fmt.Sprintf("instance %s (%s, tagged for nodeclaim %q) is named by no NodeClaim", id, i.InstanceType, i.Tags[awsv1.TagKeyNodeClaim])
		}
	}
}

// checkLaunchedOnce: no NodeClaim was ever launched twice, whatever state its instances are in
// now (the emulator keeps terminated instances).
func (s *sampler) checkLaunchedOnce(snap *snapshot) {
	tagged := map[string][]string{}
	for _, i := range snap.instances {
		if name := i.Tags[awsv1.TagKeyNodeClaim]; name != "" {
			tagged[name] = append(tagged[name], i.ID+" "+i.State)
		}
	}
	for name, ids := range tagged {
		s.checks["launched once"]++
		if len(ids) > 1 {
			sort.Strings(ids)
			s.fail("launched/"+name, fmt.Sprintf("nodeclaim %s was launched %d times: %v", name, len(ids), ids))
		}
	}
}

// checkIdle: while consolidation is off and no pod of the namespace is pending, every NodeClaim
// initialized for idleGrace runs a pod of the namespace; one that does not was bought for pods
// another NodeClaim serves (a duplicate launch).
func (s *sampler) checkIdle(snap *snapshot, now time.Time, violations map[string]string) {
	busy := map[string]bool{}
	for _, p := range snap.pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName == "" {
			return // a pod pending: a node may be on its way for it
		}
		busy[p.Spec.NodeName] = true
	}
	for _, nc := range snap.claims {
		init := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInitialized)
		if nc.DeletionTimestamp != nil || init == nil || init.Status != metav1.ConditionTrue {
			continue
		}
		s.checks["no duplicate nodeclaim"]++
		if !busy[nc.Status.NodeName] && now.Sub(init.LastTransitionTime.Time) > idleGrace {
			violations["idle/"+nc.Name] = fmt.Sprintf("nodeclaim %s (node %s) runs no pod of %s although none is pending: bought for pods another NodeClaim serves",
				nc.Name, nc.Status.NodeName, s.namespace)
		}
	}
}

// checkPDBs: for each PodDisruptionBudget with maxUnavailable, at least the Deployment's replicas
// less maxUnavailable of its pods are Ready. It is armed once every pod was Ready, and the run
// only scales Deployments down meanwhile, so a shortfall is a disruption past the budget.
func (s *sampler) checkPDBs(snap *snapshot) {
	for _, pdb := range snap.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Spec.MaxUnavailable == nil {
			continue
		}
		var replicas int32
		for _, d := range snap.deploys {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) && d.Spec.Replicas != nil {
				replicas += *d.Spec.Replicas
			}
		}
		allowed, err := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, int(replicas), true)
		if err != nil {
			continue
		}
		ready := 0
		for _, p := range snap.pods {
			if p.DeletionTimestamp == nil && sel.Matches(labels.Set(p.Labels)) && podReady(&p) {
				ready++
			}
		}
		s.checks["pdb"]++
		if ready < int(replicas)-allowed {
			s.fail("pdb/"+pdb.Name, fmt.Sprintf("pdb %s exceeded: %d of %d pods Ready, maxUnavailable %s", pdb.Name, ready, replicas, pdb.Spec.MaxUnavailable.String()))
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// report is what the sampler did and found.
func (s *sampler) report() (samples, skipped int, checks map[string]int, failures []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	checks = map[string]int{}
	for k, v := range s.checks {
		checks[k] = v
	}
	return s.samples, s.skipped, checks, append([]string(nil), s.failures...)
}
