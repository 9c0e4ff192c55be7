package lifecycle

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// findCondition returns the condition of the type, or nil.
func findCondition(conditions []metav1.Condition, conditionType string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == conditionType {
			return &conditions[i]
		}
	}
	return nil
}

// isTrue reports whether the NodeClaim's condition of the type is True.
func isTrue(nodeClaim *v1.NodeClaim, conditionType string) bool {
	c := findCondition(nodeClaim.Status.Conditions, conditionType)
	return c != nil && c.Status == metav1.ConditionTrue
}

// setCondition sets the condition and reports whether anything changed. The transition time is
// now (from the injected clock) when the status changes, and kept otherwise.
func setCondition(nodeClaim *v1.NodeClaim, conditionType string, status metav1.ConditionStatus, reason, message string, now time.Time) bool {
	c := findCondition(nodeClaim.Status.Conditions, conditionType)
	if c == nil {
		nodeClaim.Status.Conditions = append(nodeClaim.Status.Conditions, metav1.Condition{
			Type: conditionType, Status: status, Reason: reason, Message: message,
			ObservedGeneration: nodeClaim.Generation, LastTransitionTime: metav1.NewTime(now),
		})
		return true
	}
	if c.Status == status && c.Reason == reason && c.Message == message && c.ObservedGeneration == nodeClaim.Generation {
		return false
	}
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status, c.Reason, c.Message, c.ObservedGeneration = status, reason, message, nodeClaim.Generation
	return true
}

// setReady computes Ready from Launched, Registered and Initialized: True when all three are,
// otherwise the status, reason and message of the first that is not.
func setReady(nodeClaim *v1.NodeClaim, now time.Time) {
	for _, t := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
		c := findCondition(nodeClaim.Status.Conditions, t)
		if c == nil {
			setCondition(nodeClaim, v1.ConditionTypeReady, metav1.ConditionUnknown, "AwaitingReconciliation", t+" has not been observed yet", now)
			return
		}
		if c.Status != metav1.ConditionTrue {
			setCondition(nodeClaim, v1.ConditionTypeReady, c.Status, "Not"+t, t+": "+c.Message, now)
			return
		}
	}
	setCondition(nodeClaim, v1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "The instance is launched, registered and initialized", now)
}
