// Package termination drains and removes Nodes that Joiner launched. It acts on a Node that is
// being deleted and carries the karpenter.sh/termination finalizer:
//
//  1. it deletes the Node's NodeClaim, if that is not already being deleted, so that both go
//     together (the NodeClaim's own finalizer is released by nodeclaim/lifecycle once the Node is
//     gone and the instance terminated);
//  2. it taints the Node karpenter.sh/disrupted:NoSchedule so nothing new lands there;
//  3. it drains the Node through the Eviction API, one priority tier at a time: ordinary pods,
//     then system-critical pods, then daemonset pods, then critical daemonset pods. An eviction a
//     PodDisruptionBudget refuses (HTTP 429) is retried later; pods annotated
//     karpenter.sh/do-not-disrupt are left alone. Once the NodeClaim's termination timestamp
//     (deletion + terminationGracePeriod) has passed, every remaining pod is deleted instead;
//  4. it records Drained on the NodeClaim, asks the cloud to delete the instance
//     (InstanceTerminating), and removes the Node's finalizer once the instance is gone.
//
// Time is read from the injected clock; waiting is RequeueAfter, never a sleep. The package must not
// launch anything or change a Node that is not being deleted.
package termination
