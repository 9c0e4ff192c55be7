// Package console serves Joiner's read-only web console: what the cluster costs per hour by
// NodePool and capacity type, how full each node is, why each pending pod waits (pkg/explain's
// per-NodePool reasons), what each NodeClaim went through and why a failed one did not join, and
// the EC2NodeClasses' conditions with their NodeJoinReady preflight findings.
//
// Every request reads the cluster once through the reader it is given (the manager's cache in the
// controller, StartCache's informer cache in `joiner console`: memory, not the API server) and the
// instance types, with their prices, through the cloud provider. The console writes nothing and
// shows no credential: it renders only labels, conditions, resources and prices. The state it
// keeps is small and bounded: the Overview's cost history, which RecordCost samples in memory
// (CostHistory long), and the prices last read of each NodePool, used while its instance types
// cannot be read (its class not Ready). Templates, CSS and the small polling script are embedded
// (go:embed), so it needs no network beyond the API server and the cloud provider's price reads.
// Each page polls /api/PAGE, a JSON object carrying the page's rendered <main>, every few seconds.
package console
