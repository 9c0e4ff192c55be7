package wire

import (
	"net/http"
	"strings"
)

// Call is who is calling which service in which region, read from the SigV4 Authorization header
// (`Credential=AKID/DATE/REGION/SERVICE/aws4_request`). Signatures are not verified.
type Call struct {
	RequestID string
	AccessKey string
	Region    string
	Service   string
}

// ParseCall reads the caller from a signed request. ok is false when the request is not signed.
func ParseCall(r *http.Request) (c Call, ok bool) {
	auth := r.Header.Get("Authorization")
	_, cred, found := strings.Cut(auth, "Credential=")
	if !found {
		return Call{}, false
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return Call{}, false
	}
	return Call{AccessKey: parts[0], Region: parts[2], Service: parts[3]}, true
}
