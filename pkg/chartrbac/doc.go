// Package chartrbac lets a test or the local stack run the controller as the Helm chart's
// ServiceAccount, so that a permission the chart does not grant fails: Render runs the pinned
// helm on charts/joiner, Apply creates the chart's ServiceAccount and RBAC (and nothing else) on
// the API server, and Kubeconfig writes a kubeconfig holding a token of that ServiceAccount,
// obtained with the TokenRequest API.
//
// It must not start anything or know the controller: callers pass the kubeconfig to
// `joiner controller --kubeconfig`.
package chartrbac
