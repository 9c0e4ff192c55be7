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
// cannot be read (its class not Ready). The CSS and the small polling script are embedded
// (go:embed), so it needs no network beyond the API server and the cloud provider's price reads.
// Each page polls /api/PAGE, a JSON object carrying the page's rendered <main>, every few seconds.
//
// The pages are rendered in Go (render.go's htmlWriter: markup only from constants, every value
// escaped with html.EscapeString, links only same-origin paths), and the package must not use
// text/template or html/template outside its tests. Their evaluator calls
// reflect.Value.MethodByName; a binary that can reach such a call makes the Go linker keep every
// exported method of every type that reaches an interface, the whole AWS SDK's among them. With the console's templates the joiner binary
// was 131.9 MB and `joiner controller --help` peaked at 48 MB RSS; with neither them nor the
// other such call (`joiner dev` links envtest, which executes html/template: the image's build,
// -tags nolocalstack, leaves it out), 66.3 MB and 39 MB
// (a fresh copy of each binary, median of five): the controller maps less of its own file.
// cmd/joiner's TestLinkerCanDropUnusedMethods fails when such a call comes back. testdata/ keeps
// the templates the pages were rendered with, as the oracle of TestRendererMatchesTemplates: the
// renderer must write the same bytes.
package console
