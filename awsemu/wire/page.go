package wire

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Page returns the window [start, end) of a list of n items for a request with maxResults and
// nextToken, and the token for the following page ("" on the last page). maxResults <= 0 means
// all remaining items. Tokens are opaque to clients and bound to the operation (scope), so a token
// from one operation is refused by another, as AWS does.
func Page(scope string, n, maxResults int, nextToken string) (start, end int, next string, err error) {
	if nextToken != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(nextToken)
		s, ok := strings.CutPrefix(string(raw), scope+":")
		if derr != nil || !ok {
			return 0, 0, "", NewError(400, "InvalidNextToken", "The token '%s' is invalid.", nextToken)
		}
		start, err = strconv.Atoi(s)
		if err != nil || start < 0 || start > n {
			return 0, 0, "", NewError(400, "InvalidNextToken", "The token '%s' is invalid.", nextToken)
		}
	}
	end = n
	// maxResults < n-start rather than start+maxResults < n: a huge MaxResults must not overflow.
	if maxResults > 0 && maxResults < n-start {
		end = start + maxResults
		next = base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s:%d", scope, end))
	}
	return start, end, next, nil
}
