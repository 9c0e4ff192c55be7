// Package interruption acts on the EC2 and AWS Health events that EventBridge rules send to the
// cluster's interruption queue (the controller's --interruption-queue), as Karpenter's AWS
// interruption controller does. On the leader it long-polls the SQS queue through the AWS SDK
// and, for each message (Parse):
//
//   - a spot interruption warning, an AWS Health scheduled change of EC2 instances, or an
//     instance stopping, stopped, shutting down or terminated: records an event on the NodeClaim
//     and Node and deletes the NodeClaim, so that node/termination cordons and drains the Node
//     within PodDisruptionBudgets and provisioning launches capacity for the evicted pods ahead
//     of the interruption. A spot interruption also marks its offering (instance type, zone,
//     spot) unavailable (instancetype.UnavailableOfferings) so that the replacement and the
//     launches after it avoid that pool for a while;
//   - a rebalance recommendation: only records an event, as Karpenter does by default;
//   - anything else, or a message that cannot be read: logged and counted.
//
// Every message is deleted once handled; one whose handling failed (the API server refused
// the delete) is left to come back after its visibility timeout. Messages are counted as
// Karpenter counts them (karpenter_interruption_received_messages_total,
// karpenter_interruption_deleted_messages_total,
// karpenter_interruption_message_queue_duration_seconds). Time is the injected clock's.
//
// The package must not drain, evict or terminate anything itself, nor launch capacity.
package interruption
