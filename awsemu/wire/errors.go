package wire

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an AWS error as it goes on the wire: a code, a message and the HTTP status.
type Error struct {
	Code    string
	Message string
	Status  int
	// Sender is true for client faults (AWS query `<Type>Sender</Type>`).
	Sender bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// NewError returns an error with the given code, status and message.
func NewError(status int, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Status: status, Sender: status < 500}
}

// AsError returns err as a wire Error; anything else becomes InternalError (500).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: "InternalError", Message: err.Error(), Status: http.StatusInternalServerError}
}

// InvalidParameterValue is EC2's error for a malformed parameter.
func InvalidParameterValue(msg string) *Error {
	return &Error{Code: "InvalidParameterValue", Message: msg, Status: http.StatusBadRequest, Sender: true}
}

// MissingParameter is the error for a required parameter that was not sent.
func MissingParameter(name string) *Error {
	return NewError(http.StatusBadRequest, "MissingParameter", "The request must contain the parameter %s", name)
}

// DryRunOperation is EC2's answer to an authorized DryRun request.
func DryRunOperation() *Error {
	return NewError(http.StatusPreconditionFailed, "DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
}
