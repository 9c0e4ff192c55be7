package wire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Target returns the operation of an AWS JSON-protocol request from `X-Amz-Target:
// Service.Operation`.
func Target(r *http.Request) string {
	t := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndex(t, "."); i >= 0 {
		return t[i+1:]
	}
	return t
}

// DecodeJSON reads a JSON-protocol request body into v; an empty body is an empty object.
func DecodeJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("reading the request body, %w", err)
	}
	if len(body) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return NewError(http.StatusBadRequest, "SerializationException", "%v", err)
	}
	return nil
}

// WriteJSON writes v as an AWS JSON 1.1 response.
func WriteJSON(w http.ResponseWriter, requestID string, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		WriteJSONError(w, requestID, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", requestID)
	_, _ = w.Write(body)
}

// WriteJSONError writes err as an AWS JSON-protocol error: `{"__type": code, "message": …}`
// with the code in X-Amzn-ErrorType too.
func WriteJSONError(w http.ResponseWriter, requestID string, err error) {
	e := AsError(err)
	body, _ := json.Marshal(map[string]string{"__type": e.Code, "message": e.Message})
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-RequestId", requestID)
	w.Header().Set("X-Amzn-ErrorType", e.Code)
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
