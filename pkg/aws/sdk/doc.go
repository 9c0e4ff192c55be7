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
// The package knows nothing of what the clients are used for; each AWS concern of the provider
// depends on a small interface that one of these clients satisfies.
package sdk
