// Package housekeeping runs the AWS provider's periodic work on the leader: refreshing prices
// (pricing.Provider.Refresh, which itself re-reads only what is due) every PricesInterval, and
// deleting unused launch templates (launchtemplate.Provider.GarbageCollect) every
// LaunchTemplateGCInterval, both on the injected clock. Failures are logged and retried at the
// next tick.
//
// It must not launch, terminate or change Kubernetes objects.
package housekeeping
