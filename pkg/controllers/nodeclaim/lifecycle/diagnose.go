package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
	"github.com/joinerhq/joiner/pkg/joinfailure"
)

// DiagnosisInterval is how often the cloud is asked why a launched NodeClaim's Node has not
// registered (DiagnoseJoin reads the instance's console, which is not free), and so how soon
// after the evidence appears the NodeClaim says why.
const DiagnosisInterval = 15 * time.Second

// ReasonNodeNotFound is the Registered reason while no Node has the NodeClaim's providerID and
// nothing certain explains why.
const ReasonNodeNotFound = "NodeNotFound"

// diagnoses remembers, per NodeClaim, the last diagnosis and when it was made, so that reconciles
// in between (a Node event, a status patch) do not call the cloud again.
type diagnoses struct {
	mu   sync.Mutex
	last map[types.UID]diagnosed
}

type diagnosed struct {
	at time.Time
	d  cloudprovider.Diagnosis
}

func (s *diagnoses) get(uid types.UID) (diagnosed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.last[uid]
	return d, ok
}

func (s *diagnoses) put(uid types.UID, d diagnosed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[types.UID]diagnosed{}
	}
	s.last[uid] = d
}

func (s *diagnoses) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, uid)
}

// diagnose runs while a launched NodeClaim has no Node: it asks the cloud why (at most every
// DiagnosisInterval), and either fails the NodeClaim at once for a certain cause, or keeps
// Registered=Unknown with what was seen so far, and asks to run again at the next interval.
func (c *Controller) diagnose(ctx context.Context, nodeClaim *v1.NodeClaim, now time.Time) (reconcile.Result, error) {
	waiting := fmt.Sprintf("Waiting for a Node with providerID %s to join the cluster", nodeClaim.Status.ProviderID)
	diagnoser, ok := c.cloudProvider.(cloudprovider.JoinDiagnoser)
	if !ok {
		setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, ReasonNodeNotFound, waiting, now)
		return reconcile.Result{}, nil
	}
	last, ok := c.diagnoses.get(nodeClaim.UID)
	if !ok || now.Sub(last.at) >= DiagnosisInterval {
		d, err := diagnoser.DiagnoseJoin(ctx, nodeClaim)
		if err != nil {
			// The evidence could not be read; the registration timeout still applies.
			log.FromContext(ctx).Info("Diagnosing the join of nodeclaim failed", "error", err.Error())
		} else {
			last = diagnosed{at: now, d: d}
			c.diagnoses.put(nodeClaim.UID, last)
		}
	}
	d := last.d
	if d.Certain {
		message := d.Message
		if d.Evidence != "" {
			message += ". Seen: " + d.Evidence
		}
		return reconcile.Result{}, c.failJoin(ctx, nodeClaim, d.Reason, message, !d.InstanceOnly, now)
	}
	message := waiting
	if d.Message != "" {
		message += ". " + d.Message
		if d.Evidence != "" {
			message += ". Seen: " + d.Evidence
		}
	}
	setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionUnknown, ReasonNodeNotFound, message, now)
	return reconcile.Result{RequeueAfter: DiagnosisInterval}, nil
}

// failJoin sets Registered=False with the certain cause and its fix, records the cause on the
// NodePool when another launch from the same inputs would fail the same way (holdPool), and
// deletes the NodeClaim now rather than at the registration timeout.
func (c *Controller) failJoin(ctx context.Context, nodeClaim *v1.NodeClaim, reason, message string, holdPool bool, now time.Time) error {
	setCondition(nodeClaim, v1.ConditionTypeRegistered, metav1.ConditionFalse, reason, message, now)
	if holdPool {
		if err := c.recordJoinFailure(ctx, nodeClaim, reason, message, now); err != nil {
			return err
		}
	}
	return c.expire(ctx, nodeClaim, reason,
		fmt.Sprintf("NodeClaim's node cannot join (%s); deleting it now instead of waiting for the registration timeout: %s", reason, message))
}

// recordJoinFailure adds the NodeClaim to its NodePool's join failure record
// (v1.JoinFailureAnnotationKey) with the fingerprint of the inputs that decide joining.
func (c *Controller) recordJoinFailure(ctx context.Context, nodeClaim *v1.NodeClaim, reason, message string, now time.Time) error {
	name := nodeClaim.Labels[v1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	np := &v1.NodePool{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording join failure on nodepool %s, %w", name, err))
	}
	fp, err := joinfailure.Inputs(ctx, c.apiReader, c.cloudProvider, np)
	if err != nil {
		return fmt.Errorf("recording join failure on nodepool %s, %w", name, err)
	}
	raw, f := joinfailure.Record(joinfailure.Read(np), nodeClaim.Name, reason, message, fp, now)
	stored := np.DeepCopy()
	if np.Annotations == nil {
		np.Annotations = map[string]string{}
	}
	np.Annotations[v1.JoinFailureAnnotationKey] = raw
	log.FromContext(ctx).Info("Recording join failure on nodepool", "nodepool", name, "reason", reason, "failures", len(f.NodeClaims))
	if err := c.kubeClient.Patch(ctx, np, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("recording join failure on nodepool %s, %w", name, err))
	}
	return nil
}

// clearJoinFailure removes the NodePool's join failure record once one of its nodes registered:
// whatever held its nodes back no longer does.
func (c *Controller) clearJoinFailure(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	name := nodeClaim.Labels[v1.NodePoolLabelKey]
	if name == "" {
		return nil
	}
	np := &v1.NodePool{}
	if err := c.kubeClient.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("clearing join failure of nodepool %s, %w", name, err))
	}
	if _, ok := np.Annotations[v1.JoinFailureAnnotationKey]; !ok {
		return nil
	}
	stored := np.DeepCopy()
	delete(np.Annotations, v1.JoinFailureAnnotationKey)
	log.FromContext(ctx).Info("Clearing join failure of nodepool", "nodepool", name)
	if err := c.kubeClient.Patch(ctx, np, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("clearing join failure of nodepool %s, %w", name, err))
	}
	return nil
}
