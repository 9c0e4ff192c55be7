// Package charts holds no code: its tests render the Helm charts of this directory with the
// helm binary pinned in hack/tools (bin/helm, `make helm`) and apply them to a real API
// server with server-side dry-run validation.
package charts
