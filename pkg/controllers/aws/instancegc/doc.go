// Package instancegc terminates leaked instances on the leader (issue 5 item 7): instances tagged
// for this cluster by Joiner that no NodeClaim names in status.providerID. Every Interval on the
// injected clock it lists every NodeClaim's status.providerID, asks instance.Provider.Leaked for
// the cluster's instances that none names, and terminates each, logging it.
//
// A NodeClaim being created right now must not lose its instance: between CreateFleet returning
// and status.providerID reaching the API server (and this controller's cache) the instance is
// named by no NodeClaim. Leaked skips every instance younger than
// instance.GarbageCollectionGrace, which covers that window. If NodeClaims cannot be listed,
// nothing is terminated.
//
// It must not launch instances or change Kubernetes objects.
package instancegc
