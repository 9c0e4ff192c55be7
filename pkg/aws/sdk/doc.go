// Package sdk builds the aws-sdk-go-v2 configuration and clients Joiner's AWS provider uses: the
// region, an optional endpoint override (Options.Endpoint, else AWS_ENDPOINT_URL as the SDK reads
// it), the credential chain, bounded retries, and an HTTP client that is safe against fast
// servers.
//
// The HTTP client matters: smithy-go closes a request body once response headers arrive, and its
// body's WriteTo then fails, so net/http closes the connection under the response being read
// ("use of closed network connection"). PlainBodies hides io.WriterTo on request bodies, which
// makes net/http read them through Read and see a clean EOF.
//
// The clients pace themselves (Options.RateLimitScale, pacing.go): every client built from one
// configuration shares a token bucket per AWS bucket of pkg/aws/apilimits, scaled, and each
// attempt of a call waits there until its buckets allow it, so that a controller over AWS's
// rates queues at home instead of being refused. A throttling error empties the action's
// bucket. Options.Registerer receives the calls', attempts', throttles', retries' and waits'
// metrics (metrics.go, docs/metrics.md).
//
// The package knows nothing of what the clients are used for; each AWS concern of the provider
// depends on a small interface that one of these clients satisfies.
package sdk
