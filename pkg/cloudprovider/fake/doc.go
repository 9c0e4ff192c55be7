// Package fake is an in-memory cloudprovider.CloudProvider for controller tests. It owns nothing
// but its own map of "instances" and records every call so tests can assert on them.
//
// Limits: it launches instantly, picks the first instance type and offering the NodeClaim's
// requirements allow (by instance type and zone names, capacity type), never reaches a cloud,
// never fails unless told to (NextError, ErrorsFor), and computes no prices, AMIs or drift of its
// own. Tests of anything AWS-specific belong in pkg/aws against the emulator, not here.
package fake
