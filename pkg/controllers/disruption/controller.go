package disruption

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/cluster"
	"github.com/joinerhq/joiner/pkg/joinfailure"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

const name = "disruption"

// DefaultInterval is how often a disruption pass runs.
const DefaultInterval = 10 * time.Second

// ValidationPeriod is how long a decided command waits before it is decided again and, if it
// still holds, carried out, as Karpenter's consolidation TTL: pods that were about to be bound,
// and nodes that were about to be used, show up meanwhile.
const ValidationPeriod = 15 * time.Second

// ReplacementTimeout is how long a command waits for its replacements to be initialized; after
// it, the candidates are untainted and kept.
const ReplacementTimeout = 10 * time.Minute

// replacementPoll is how often a pass runs while replacements are launching.
const replacementPoll = 2 * time.Second

// Controller disrupts nodes: empty, drifted, underused and expired ones. Build it with
// NewController. Its state (the command waiting for validation, those whose replacements are
// launching, the last reason given per NodeClaim) lives only on the leader, in the one goroutine
// that runs passes.
type Controller struct {
	kube      client.Client
	apiReader client.Reader
	cluster   *cluster.Cluster
	cloud     cloudprovider.CloudProvider
	clock     clock.WithTicker
	recorder  events.EventRecorder
	metrics   *metrics

	// Interval may be changed before Register; NewController sets DefaultInterval.
	Interval time.Duration
	// JoinFailureHold is provisioning's (nodepool/joinfailure.DefaultHold unless changed
	// before Register): a NodePool whose launches provisioning holds because its nodes do not
	// join is offered no replacement.
	JoinFailureHold time.Duration
	// nodeCost is what every node costs per hour beyond its instance (WithNodeCost).
	nodeCost float64
	// spotToSpot is the SpotToSpotConsolidation feature gate (WithSpotToSpotConsolidation).
	spotToSpot bool
	// settings are the scheduling policies and default spreads (WithScheduling).
	settings scheduling.Settings

	pending  *command
	inflight []*command
	// notes are the last reason given per NodeClaim for keeping it, so that an event goes out
	// only when it changes.
	notes map[string]string
	// stuck are the NodeClaims the last deciding pass found could not go on their own (see
	// pass.stuckBefore).
	stuck map[string]bool
	// told are the objects whose invalid karpenter.sh/do-not-disrupt value an event has told,
	// with what it said, so that a value is told once rather than every pass.
	told map[types.UID]string
	// cleaned is set once the first pass resumed the commands an earlier leader left in flight
	// and untainted the nodes it left tainted with none (resume).
	cleaned bool
}

// NewController returns the disruption controller. The view finds candidates; kube writes
// NodeClaims (DisruptionReason, replacements, deletion) and Node taints; the last check before
// acting reads through kube until Register replaces that with the manager's uncached reader;
// cloud gives the instance types and prices replacements are chosen from. Metrics go to reg.
func NewController(kube client.Client, view *cluster.Cluster, cloud cloudprovider.CloudProvider, clk clock.WithTicker, recorder events.EventRecorder, reg prometheus.Registerer, opts ...Option) (*Controller, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	c := &Controller{kube: kube, apiReader: kube, cluster: view, cloud: cloud, clock: clk, recorder: recorder, metrics: m,
		Interval: DefaultInterval, JoinFailureHold: joinfailure.DefaultHold, notes: map[string]string{}, told: map[types.UID]string{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Option is an optional setting of NewController.
type Option func(*Controller)

// WithNodeCost counts dollars per hour for every node beyond its instance and what the cloud
// provider prices per node (the operator's --node-cost, as provisioning's WithNodeCost): a
// deleted node saves it, a replacement costs it.
func WithNodeCost(dollarsPerHour float64) Option {
	return func(c *Controller) { c.nodeCost = dollarsPerHour }
}

// WithSpotToSpotConsolidation turns on Karpenter's SpotToSpotConsolidation feature gate (the
// operator's --feature-gates): consolidation may replace spot nodes by cheaper spot nodes.
// Without it, as upstream's default, a replacement of spot nodes only that could be spot is
// not made; they may still be deleted, or replaced where only on-demand capacity fits.
func WithSpotToSpotConsolidation(on bool) Option {
	return func(c *Controller) { c.spotToSpot = on }
}

// WithScheduling simulates with the operator's scheduling settings (--min-values-policy,
// --preference-policy, --scheduler-config), as provisioning's WithScheduling.
func WithScheduling(st scheduling.Settings) Option {
	return func(c *Controller) { c.settings = st }
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// Register runs the controller on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	c.apiReader = mgr.GetAPIReader()
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader disrupts.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs a pass at once and then every Interval, or sooner when a pass asks to be run again
// sooner, until ctx ends. A failed pass is logged and the next one tries again.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	ctx = log.IntoContext(ctx, logger)
	for {
		res, err := c.Disrupt(ctx)
		if err != nil {
			logger.Error(err, "Disrupting nodes")
		}
		wait := c.Interval
		if res.RequeueAfter > 0 && res.RequeueAfter < wait {
			wait = res.RequeueAfter
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(wait):
		}
	}
}

// Result is what one pass did.
type Result struct {
	// Deleted are the NodeClaims deleted; Launched the replacement NodeClaims created.
	Deleted, Launched []string
	// Decided is the command decided this pass, waiting ValidationPeriod, described; "" if none.
	Decided string
	// RequeueAfter, when set, is when the next pass is due: a command waits to be validated, for
	// its replacements, or a NodeClaim expires.
	RequeueAfter time.Duration
}

func (r *Result) requeue(d time.Duration) {
	if d > 0 && (r.RequeueAfter == 0 || d < r.RequeueAfter) {
		r.RequeueAfter = d
	}
}

// Disrupt runs one pass. It deletes expired NodeClaims; moves on the commands whose replacements
// are launching; then carries out the command decided ValidationPeriod ago if deciding again on
// the cluster now still gives it, or else decides a new command (Empty, Drifted, multi-node,
// single-node, the first that finds one) for a later pass to validate. Errors of single nodes
// do not stop the pass; they are joined in the error returned.
func (c *Controller) Disrupt(ctx context.Context) (Result, error) {
	var res Result
	var errs []error
	now := c.clock.Now()
	expired, next, err := c.expire(ctx, now)
	res.Deleted = append(res.Deleted, expired...)
	res.requeue(next)
	errs = append(errs, err)

	if !c.cleaned {
		errs = append(errs, c.resume(ctx))
		c.cleaned = true
	}
	c.inflight = slices.DeleteFunc(c.inflight, func(cmd *command) bool {
		done, deleted, err := c.advance(ctx, cmd, now)
		res.Deleted = append(res.Deleted, deleted...)
		errs = append(errs, err)
		return done
	})
	if len(c.inflight) > 0 {
		res.requeue(replacementPoll)
	}

	// A command due for validation is decided again on its nodes, so they are not busy then.
	due := c.pending != nil && !now.Before(c.pending.validateAt)
	notes := map[string]string{}
	ps, err := c.newPass(ctx, now, c.busy(!due), func(sn *cluster.StateNode, why string) { notes[sn.NodeClaim.Name] = why })
	if err != nil {
		return res, errors.Join(append(errs, err)...)
	}
	c.observeBudgets(ps)
	c.tellInvalid(ps.invalid)
	if !ps.wake.IsZero() {
		res.requeue(ps.wake.Sub(now))
	}
	switch {
	case c.pending != nil && now.Before(c.pending.validateAt):
		res.requeue(c.pending.validateAt.Sub(now))
	case due:
		old := c.pending
		c.pending = nil
		cmd, why, err := ps.revalidate(old)
		switch {
		case err != nil:
			errs = append(errs, err)
		case cmd == nil:
			log.FromContext(ctx).Info("Abandoning disruption that no longer holds", "nodes", old.nodeNames(), "decision", old.describe(), "reason", why)
			for _, cand := range old.candidates {
				errs = append(errs, c.forgetCommand(ctx, cand.node.NodeClaim))
			}
		default:
			deleted, launched, err := c.execute(ctx, cmd)
			res.Deleted = append(res.Deleted, deleted...)
			res.Launched = append(res.Launched, launched...)
			errs = append(errs, err)
			if len(launched) > 0 {
				res.requeue(replacementPoll)
			}
		}
	default:
		start := c.clock.Now()
		ps.stuckBefore = c.stuck
		d, err := ps.decide()
		c.stuck = ps.stuck()
		errs = append(errs, err)
		for name, why := range d.notes {
			notes[name] = why
		}
		if d.cmd != nil {
			c.metrics.evaluation.WithLabelValues(d.cmd.method.label, d.cmd.method.consolidationType).Observe(c.clock.Since(start).Seconds())
			d.cmd.validateAt = c.validateAt(ctx, d.cmd, now)
			c.pending = d.cmd
			res.Decided = d.cmd.describe()
			res.requeue(max(d.cmd.validateAt.Sub(now), time.Millisecond))
			log.FromContext(ctx).Info("Decided disruption, validating it again after the validation period", "nodes", d.cmd.nodeNames(),
				"decision", res.Decided, "validateAt", d.cmd.validateAt)
		}
	}
	// While nodes are leaving, budgets free up as they go: look again soon rather than at the
	// next interval.
	if slices.ContainsFunc(ps.pools, func(p *pool) bool { return p.disrupting > 0 && len(p.candidates) > 0 }) {
		res.requeue(replacementPoll)
	}
	c.observeEligible(ps)
	c.emitNotes(ps, notes)
	return res, errors.Join(errs...)
}

// busy returns the nodes of the in-flight commands and, with pending, of the pending one.
func (c *Controller) busy(pending bool) map[string]bool {
	out := map[string]bool{}
	cmds := c.inflight
	if pending && c.pending != nil {
		cmds = append(slices.Clone(cmds), c.pending)
	}
	for _, cmd := range cmds {
		for _, n := range cmd.nodeNames() {
			out[n] = true
		}
	}
	return out
}

// observeBudgets sets karpenter_nodepools_allowed_disruptions and
// karpenter_nodepools_nodes_consuming_budgets (the NodePool's nodes disrupting now, the same for
// every reason, as Karpenter's) per NodePool and reason.
func (c *Controller) observeBudgets(ps *pass) {
	for _, p := range ps.pools {
		for _, reason := range []v1.DisruptionReason{v1.DisruptionReasonEmpty, v1.DisruptionReasonDrifted, v1.DisruptionReasonUnderutilized} {
			n, _ := ps.room(p, reason)
			c.metrics.allowed.WithLabelValues(p.nodePool.Name, string(reason)).Set(float64(max(n, 0)))
			c.metrics.consuming.WithLabelValues(p.nodePool.Name, string(reason)).Set(float64(p.disrupting))
		}
	}
}

// observeEligible sets karpenter_voluntary_disruption_eligible_nodes per reason.
func (c *Controller) observeEligible(ps *pass) {
	counts := map[string]int{methodEmpty.label: 0, methodDrifted.label: 0, methodSingle.label: 0}
	for _, p := range ps.pools {
		for _, cand := range p.candidates {
			switch {
			case cand.drifted:
				counts[methodDrifted.label]++
			case len(cand.pods) == 0:
				counts[methodEmpty.label]++
			case underutilizedAllowed(p.nodePool):
				counts[methodSingle.label]++
			}
		}
	}
	for label, n := range counts {
		c.metrics.eligible.WithLabelValues(label).Set(float64(n))
	}
}

// emitNotes sends an event on each NodeClaim whose reason for being kept changed, and forgets
// the NodeClaims that now have none.
func (c *Controller) emitNotes(ps *pass, notes map[string]string) {
	for _, sn := range ps.nodes {
		if sn.NodeClaim == nil {
			continue
		}
		why, ok := notes[sn.NodeClaim.Name]
		if !ok {
			delete(c.notes, sn.NodeClaim.Name)
			continue
		}
		if c.notes[sn.NodeClaim.Name] == why {
			continue
		}
		c.notes[sn.NodeClaim.Name] = why
		if why == notInitialized {
			continue
		}
		c.recorder.Eventf(sn.NodeClaim, nil, "Normal", ReasonDisruptionBlocked, "Disrupt", "Not disrupting: %s", why)
	}
	for name := range c.notes {
		if _, ok := notes[name]; !ok {
			delete(c.notes, name)
		}
	}
}

// ReasonInvalidDoNotDisrupt is the reason of the Warning event on a pod, Node or NodeClaim whose
// karpenter.sh/do-not-disrupt value protects nothing, as Karpenter's.
const ReasonInvalidDoNotDisrupt = "InvalidDoNotDisruptAnnotation"

// tellInvalid sends a Warning event on each object whose invalid karpenter.sh/do-not-disrupt
// value no event told yet, and forgets the objects no longer found invalid.
func (c *Controller) tellInvalid(invalid []invalidDoNotDisrupt) {
	seen := map[types.UID]bool{}
	for _, in := range invalid {
		uid, msg := in.object.GetUID(), in.err.Error()
		seen[uid] = true
		if c.told[uid] == msg {
			continue
		}
		c.told[uid] = msg
		c.recorder.Eventf(in.object, nil, corev1.EventTypeWarning, ReasonInvalidDoNotDisrupt, "Disrupt", "%s", msg)
	}
	for uid := range c.told {
		if !seen[uid] {
			delete(c.told, uid)
		}
	}
}

// nodeClaimKey is the key of the NodeClaim named.
func nodeClaimKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }
