package cloudprovider

import (
	"errors"
	"fmt"
)

// NodeClaimNotFoundError means the instance behind a NodeClaim does not exist or has terminated.
type NodeClaimNotFoundError struct {
	err error
}

// NewNodeClaimNotFoundError wraps err as a NodeClaimNotFoundError.
func NewNodeClaimNotFoundError(err error) *NodeClaimNotFoundError {
	return &NodeClaimNotFoundError{err: err}
}

func (e *NodeClaimNotFoundError) Error() string {
	return fmt.Sprintf("nodeclaim not found, %s", errString(e.err))
}

// Unwrap returns the wrapped error.
func (e *NodeClaimNotFoundError) Unwrap() error { return e.err }

// IsNodeClaimNotFoundError reports whether err is, or wraps, a NodeClaimNotFoundError.
func IsNodeClaimNotFoundError(err error) bool {
	var target *NodeClaimNotFoundError
	return errors.As(err, &target)
}

// IgnoreNodeClaimNotFoundError returns nil for a NodeClaimNotFoundError and err otherwise.
func IgnoreNodeClaimNotFoundError(err error) error {
	if IsNodeClaimNotFoundError(err) {
		return nil
	}
	return err
}

// InsufficientCapacityError means no offering the NodeClaim allows had capacity.
type InsufficientCapacityError struct {
	err error
}

// NewInsufficientCapacityError wraps err as an InsufficientCapacityError.
func NewInsufficientCapacityError(err error) *InsufficientCapacityError {
	return &InsufficientCapacityError{err: err}
}

func (e *InsufficientCapacityError) Error() string {
	return fmt.Sprintf("insufficient capacity, %s", errString(e.err))
}

// Unwrap returns the wrapped error.
func (e *InsufficientCapacityError) Unwrap() error { return e.err }

// IsInsufficientCapacityError reports whether err is, or wraps, an InsufficientCapacityError.
func IsInsufficientCapacityError(err error) bool {
	var target *InsufficientCapacityError
	return errors.As(err, &target)
}

// IgnoreInsufficientCapacityError returns nil for an InsufficientCapacityError and err otherwise.
func IgnoreInsufficientCapacityError(err error) error {
	if IsInsufficientCapacityError(err) {
		return nil
	}
	return err
}

// NodeClassNotReadyError means the node class cannot launch yet (not found, or not Ready).
type NodeClassNotReadyError struct {
	err error
}

// NewNodeClassNotReadyError wraps err as a NodeClassNotReadyError.
func NewNodeClassNotReadyError(err error) *NodeClassNotReadyError {
	return &NodeClassNotReadyError{err: err}
}

func (e *NodeClassNotReadyError) Error() string {
	return fmt.Sprintf("node class not ready, %s", errString(e.err))
}

// Unwrap returns the wrapped error.
func (e *NodeClassNotReadyError) Unwrap() error { return e.err }

// IsNodeClassNotReadyError reports whether err is, or wraps, a NodeClassNotReadyError.
func IsNodeClassNotReadyError(err error) bool {
	var target *NodeClassNotReadyError
	return errors.As(err, &target)
}

// IgnoreNodeClassNotReadyError returns nil for a NodeClassNotReadyError and err otherwise.
func IgnoreNodeClassNotReadyError(err error) error {
	if IsNodeClassNotReadyError(err) {
		return nil
	}
	return err
}

// CreateError is a launch failure worth showing on the NodeClaim's Launched condition: its
// ConditionReason (a CamelCase word) and ConditionMessage go there as they are.
type CreateError struct {
	err error
	// ConditionReason is the reason of the Launched condition, such as LaunchTemplateNotFound.
	ConditionReason string
	// ConditionMessage is the message of the Launched condition: what failed and how to fix it.
	ConditionMessage string
}

// NewCreateError wraps err as a CreateError with the given condition reason and message.
func NewCreateError(err error, reason, message string) *CreateError {
	return &CreateError{err: err, ConditionReason: reason, ConditionMessage: message}
}

func (e *CreateError) Error() string {
	return fmt.Sprintf("creating nodeclaim, %s", errString(e.err))
}

// Unwrap returns the wrapped error.
func (e *CreateError) Unwrap() error { return e.err }

// IsCreateError reports whether err is, or wraps, a CreateError.
func IsCreateError(err error) bool {
	var target *CreateError
	return errors.As(err, &target)
}

// AsCreateError returns the CreateError err is or wraps, or nil.
func AsCreateError(err error) *CreateError {
	var target *CreateError
	if errors.As(err, &target) {
		return target
	}
	return nil
}

// IgnoreCreateError returns nil for a CreateError and err otherwise.
func IgnoreCreateError(err error) error {
	if IsCreateError(err) {
		return nil
	}
	return err
}

func errString(err error) string {
	if err == nil {
		return "no cause given"
	}
	return err.Error()
}
