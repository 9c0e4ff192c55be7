// Package garbagecollection deletes NodeClaims whose instance is gone: a NodeClaim that launched
// more than a grace period ago and for whose providerID the cloud provider's Get returns
// NodeClaimNotFound (terminated by hand, reclaimed as spot, lost). Deleting it lets its Node be
// cleaned up and provisioning replace the capacity; an event says why.
//
// Each launched NodeClaim is checked again every Interval through RequeueAfter; time comes from
// the injected clock. The package must not terminate instances (leaked instances without a
// NodeClaim are the cloud provider's garbage collection) nor touch NodeClaims being deleted.
package garbagecollection
