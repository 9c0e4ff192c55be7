package interruption

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	joinermetrics "github.com/joinerhq/joiner/pkg/metrics"
)

const name = "interruption"

// ErrorBackoff is how long the loop waits after a pass that failed (the queue unreachable, the
// API server refusing a delete) before it receives again.
const ErrorBackoff = 5 * time.Second

// eventAction is the action of the events the controller records.
const eventAction = "Interrupt"

// Unavailable records offerings that should not be launched for a while
// (instancetype.UnavailableOfferings).
type Unavailable interface {
	MarkUnavailable(instanceType, zone, capacityType string)
}

// Controller acts on the EC2 and AWS Health events of an interruption queue. Build it with
// NewController.
type Controller struct {
	kube        client.Client
	queue       *Queue
	unavailable Unavailable
	clock       clock.Clock
	recorder    events.EventRecorder
	metrics     *metrics
}

// NewController returns the interruption controller for queue. kube lists NodeClaims and Nodes
// (the manager's cache) and deletes NodeClaims; spot offerings that are interrupted are marked
// in unavailable; metrics go to reg.
func NewController(kube client.Client, queue *Queue, unavailable Unavailable, clk clock.Clock, recorder events.EventRecorder, reg prometheus.Registerer) (*Controller, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	return &Controller{kube: kube, queue: queue, unavailable: unavailable, clock: clk, recorder: recorder, metrics: m}, nil
}

// Name is the controller's name in logs and metrics.
func (c *Controller) Name() string { return name }

// Register runs the controller on the leader once mgr starts.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	return mgr.Add(c)
}

// NeedLeaderElection is true: only the leader reads the queue.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start polls the queue until ctx ends: each Poll long-polls (SQS answers as soon as a message
// arrives, or empty after 20s), so the loop polls again at once; after a failed pass it waits
// ErrorBackoff on the clock.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name).WithValues("queue", c.queue.Name())
	ctx = log.IntoContext(ctx, logger)
	logger.Info("Watching interruption queue")
	for ctx.Err() == nil {
		if _, err := c.Poll(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Handling interruption messages")
			select {
			case <-ctx.Done():
			case <-c.clock.After(ErrorBackoff):
			}
		}
	}
	return nil
}

// Poll receives one batch of messages and handles each: it returns how many it received.
// A message is deleted once handled, and so is one that is malformed or asks for nothing; a
// message whose handling failed is left on the queue, to be received again after its visibility
// timeout. The errors of single messages are joined in the error returned.
func (c *Controller) Poll(ctx context.Context) (int, error) {
	msgs, err := c.queue.Receive(ctx)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	claims, nodes, err := c.byInstance(ctx)
	if err != nil {
		return len(msgs), err
	}
	var errs []error
	for _, raw := range msgs {
		if err := c.handle(ctx, raw, claims, nodes); err != nil {
			errs = append(errs, err)
		}
	}
	return len(msgs), errors.Join(errs...)
}

// handle parses one message, acts on the NodeClaims of its instances and deletes it.
func (c *Controller) handle(ctx context.Context, raw sqstypes.Message, claims map[string]*v1.NodeClaim, nodes map[string]*corev1.Node) error {
	logger := log.FromContext(ctx).WithValues("messageID", aws.ToString(raw.MessageId))
	msg, err := Parse(aws.ToString(raw.Body))
	if err != nil {
		logger.Error(err, "Deleting a malformed interruption message")
		c.metrics.received.WithLabelValues(string(KindMalformed)).Inc()
		c.observeQueueTime(raw, time.Time{})
		return c.delete(ctx, raw)
	}
	c.metrics.received.WithLabelValues(string(msg.Kind)).Inc()
	logger = logger.WithValues("messageKind", msg.Kind)
	if msg.Kind == KindNoOp {
		logger.V(1).Info("Deleting an interruption message that asks for nothing", "source", msg.Source, "detailType", msg.DetailType, "state", msg.State)
	}
	var errs []error
	for _, id := range msg.InstanceIDs {
		nodeClaim := claims[id]
		if nodeClaim == nil || msg.Kind == KindNoOp {
			continue // not an instance of this cluster's NodeClaims
		}
		if err := c.act(log.IntoContext(ctx, logger), msg, nodeClaim, nodes[id]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	c.observeQueueTime(raw, msg.Time)
	return c.delete(ctx, raw)
}

// act records the message on the NodeClaim and its Node and, for everything but a rebalance
// recommendation, deletes the NodeClaim: termination then cordons and drains the Node within
// PodDisruptionBudgets, and provisioning launches capacity for the evicted pods. An interrupted
// spot offering is marked unavailable first, so that the replacement avoids it. A NodeClaim
// already being deleted is not deleted again, and its instance stopping or terminating is only
// logged: that is what its deletion does.
func (c *Controller) act(ctx context.Context, msg Message, nodeClaim *v1.NodeClaim, node *corev1.Node) error {
	logger := log.FromContext(ctx).WithValues("nodeclaim", klog.KObj(nodeClaim))
	if node != nil {
		logger = logger.WithValues("node", klog.KObj(node))
	}
	deleting := !nodeClaim.DeletionTimestamp.IsZero()
	if deleting && (msg.Kind == KindInstanceStopped || msg.Kind == KindInstanceTerminated) {
		// Most likely Joiner's own termination of the instance: nothing to tell.
		logger.V(1).Info("Instance of a deleting NodeClaim changed state", "state", msg.State)
		return nil
	}
	eventType, reason, note := notice(msg.Kind)
	c.event(nodeClaim, node, eventType, reason, note)
	instanceType, zone := nodeClaim.Labels[corev1.LabelInstanceTypeStable], nodeClaim.Labels[corev1.LabelTopologyZone]
	if msg.Kind == KindSpotInterruption && instanceType != "" && zone != "" {
		logger.Info("Marking the interrupted spot offering unavailable", "instanceType", instanceType, "zone", zone)
		c.unavailable.MarkUnavailable(instanceType, zone, v1.CapacityTypeSpot)
	}
	if msg.Kind == KindRebalanceRecommendation || deleting {
		return nil
	}
	logger.Info("Deleting the NodeClaim of an interrupted instance")
	if err := c.kube.Delete(ctx, nodeClaim); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting nodeclaim %s on a %s message, %w", nodeClaim.Name, msg.Kind, err)
	}
	c.event(nodeClaim, node, corev1.EventTypeWarning, "TerminatingOnInterruption", "Interruption triggered termination")
	c.metrics.nodeClaimsDisrupted.WithLabelValues(string(msg.Kind), nodeClaim.Labels[v1.NodePoolLabelKey], nodeClaim.Labels[v1.CapacityTypeLabelKey],
		"", joinermetrics.TerminationMode(nodeClaim)).Inc()
	return nil
}

// notice is the event each kind of message puts on the NodeClaim and Node, as Karpenter's.
func notice(kind Kind) (eventType, reason, note string) {
	switch kind {
	case KindSpotInterruption:
		return corev1.EventTypeWarning, "SpotInterrupted", "Spot interruption warning: EC2 reclaims the instance in two minutes"
	case KindRebalanceRecommendation:
		return corev1.EventTypeNormal, "SpotRebalanceRecommendation", "Spot rebalance recommendation: the instance is at elevated risk of interruption"
	case KindScheduledChange:
		return corev1.EventTypeWarning, "InstanceUnhealthy", "AWS Health scheduled a change (maintenance or retirement) of the instance"
	case KindInstanceStopped:
		return corev1.EventTypeWarning, "InstanceStopping", "Instance is stopping"
	default:
		return corev1.EventTypeWarning, "InstanceTerminating", "Instance is terminating"
	}
}

// event records an event on the NodeClaim and, when there is one, its Node.
func (c *Controller) event(nodeClaim *v1.NodeClaim, node *corev1.Node, eventType, reason, note string) {
	c.recorder.Eventf(nodeClaim, nil, eventType, reason, eventAction, note)
	if node != nil {
		c.recorder.Eventf(node, nil, eventType, reason, eventAction, note)
	}
}

// delete deletes a handled message.
func (c *Controller) delete(ctx context.Context, raw sqstypes.Message) error {
	if err := c.queue.Delete(ctx, raw); err != nil {
		return err
	}
	c.metrics.deleted.Inc()
	return nil
}

// observeQueueTime records how long the message waited: since SQS received it, or else since the
// event happened.
func (c *Controller) observeQueueTime(raw sqstypes.Message, eventTime time.Time) {
	since, ok := sentAt(raw)
	if !ok {
		since = eventTime
	}
	if !since.IsZero() {
		c.metrics.queueDuration.Observe(max(0, c.clock.Since(since).Seconds()))
	}
}

// byInstance returns the NodeClaims and Nodes by the instance id of their provider id.
func (c *Controller) byInstance(ctx context.Context) (map[string]*v1.NodeClaim, map[string]*corev1.Node, error) {
	var claims v1.NodeClaimList
	if err := c.kube.List(ctx, &claims); err != nil {
		return nil, nil, fmt.Errorf("listing nodeclaims, %w", err)
	}
	var nodes corev1.NodeList
	if err := c.kube.List(ctx, &nodes); err != nil {
		return nil, nil, fmt.Errorf("listing nodes, %w", err)
	}
	byClaim := map[string]*v1.NodeClaim{}
	for i := range claims.Items {
		if id := instance.InstanceID(claims.Items[i].Status.ProviderID); id != "" {
			byClaim[id] = &claims.Items[i]
		}
	}
	byNode := map[string]*corev1.Node{}
	for i := range nodes.Items {
		if id := instance.InstanceID(nodes.Items[i].Spec.ProviderID); id != "" {
			byNode[id] = &nodes.Items[i]
		}
	}
	return byClaim, byNode, nil
}
