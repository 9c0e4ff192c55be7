// Package operator builds the process that runs Joiner's controllers: a controller-runtime
// manager with leader election on a Lease, health and readiness probes, a Prometheus metrics
// endpoint serving a registry the caller passes in, and zap structured logs through logr.
// Its manager's cache keeps only what the controllers read, with repeated strings interned, and
// its GetEventRecorder records events.k8s.io/v1 Events with bounded memory.
//
// Options holds every setting of the controller process, read from flags with environment
// variables as their defaults (CLUSTER_NAME, CLUSTER_ENDPOINT, INTERRUPTION_QUEUE,
// BATCH_IDLE_DURATION, BATCH_MAX_DURATION, LOG_LEVEL...). It is passed to whoever needs it, never
// stored in a global or in the context.
//
// The package owns process wiring only: it must not hold controller logic (that is
// pkg/controllers) or choose a cloud provider (cmd/joiner does).
package operator
