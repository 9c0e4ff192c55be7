package lifecycle

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestOnlyConflicts: a reconcile is retried soon, outside the rate limiter, only when every
// failure was a conflict (wrapped as the phases wrap them); any other failure keeps the backoff.
func TestOnlyConflicts(t *testing.T) {
	conflict := fmt.Errorf("registering node a, %w", apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "a", errors.New("the object has been modified")))
	other := errors.New("launching nodeclaim, insufficient capacity")
	for _, tc := range []struct {
		name string
		errs []error
		want bool
	}{
		{name: "no failure", errs: []error{nil, nil}},
		{name: "a conflict", errs: []error{nil, conflict, nil}, want: true},
		{name: "two conflicts", errs: []error{conflict, conflict}, want: true},
		{name: "a conflict and another failure", errs: []error{conflict, other}},
		{name: "another failure", errs: []error{other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyConflicts(tc.errs); got != tc.want {
				t.Errorf("onlyConflicts() = %v, want %v", got, tc.want)
			}
		})
	}
}
