// Package cluster is the controllers' view of the cluster: Nodes joined to the NodeClaims they
// came from (or NodeClaims still in flight, without a Node yet), the pods bound to each, the pods
// not bound yet, and one pod per DaemonSet. It reads through a client.Reader, in the operator the
// manager's cache, so every read is local and cheap; objects it hands out from a cache are the
// cache's own, to read and not to change.
//
// It owns reading and joining only. It must not write to the API server, call the cloud, or
// decide anything (what is provisionable, what fits, what to disrupt): that is the controllers'
// business.
package cluster
