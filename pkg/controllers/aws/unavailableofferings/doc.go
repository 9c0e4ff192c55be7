// Package unavailableofferings keeps the unavailable-offerings record
// (instancetype.UnavailableOfferings: the instance type, zone and capacity type EC2 just refused
// for insufficient capacity, or reclaimed a spot instance of) across controller restarts and
// leader changes, in a ConfigMap of the controller's namespace, ConfigMapName. Without it each
// new leader started with an empty record and launched into the refused pools again; under
// repeated restarts (a crash loop, node churn, the chaos suite's kills) every replacement of a
// drift or consolidation tried a refused type first, failed, and the command was rolled back.
//
// The ConfigMap holds one key per offering, "<instance type>_<zone>_<capacity type>" (the
// characters a ConfigMap key allows), whose value is when the offering is available again
// (RFC 3339), so an operator reads it with `kubectl get configmap`. Deleting it forgets the
// record; an entry that cannot be read is logged and skipped.
//
// Every replica reads the record when it starts, before the election, and again once elected;
// read entries keep their own expiry (UnavailableTTL from when EC2 refused). Only the leader
// writes: at once after an offering is marked, and every SyncInterval to drop expired entries or
// retry a failed write. A leader killed within the write's round trip of a refusal loses that
// one entry. Reads go to the API server, not the manager's cache, which would watch every
// ConfigMap of the cluster.
//
// The package must not launch anything nor call the cloud.
package unavailableofferings
