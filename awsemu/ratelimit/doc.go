// Package ratelimit meters the emulator's API requests as AWS does: per account and Region, one
// token bucket per published bucket of pkg/aws/apilimits (EC2's request bucket of every action,
// its resource buckets of RunInstances, TerminateInstances, StartInstances and StopInstances, SSM
// Parameter Store's throughput, the Price List Query API's), each starting full. A request whose
// bucket is empty is refused before it is served, and costs no token. The Limiter keeps per
// bucket the tokens now, the requests charged and the requests refused, for the inspection
// endpoint.
package ratelimit
