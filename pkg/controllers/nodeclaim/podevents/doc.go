// Package podevents keeps a NodeClaim's status.lastPodEventTime: when a pod was last bound to or
// removed from its node. Consolidation (nodeclaim/consolidatable) waits the NodePool's
// consolidateAfter from that time, so a node that pods keep landing on or leaving is left alone.
//
// Pod events count when a pod that is not a DaemonSet's nor a mirror pod
//   - is bound to a node (spec.nodeName set by an update, as the Binding subresource does),
//   - is created already bound, if its creation is recent (within DedupeWindow of the clock), so
//     that the create events a restart replays for every existing pod do not reset every node,
//   - finishes (Succeeded or Failed), starts terminating (deletionTimestamp), or is deleted.
//
// Each event enqueues the node's name. A write is made at most once per DedupeWindow per
// NodeClaim: an event inside the window is recorded at its end (RequeueAfter), never dropped, so
// the recorded time is at most DedupeWindow later than the event and never earlier.
//
// Time comes from the injected clock. The package must write nothing but status.lastPodEventTime.
package podevents
