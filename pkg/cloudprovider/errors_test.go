package cloudprovider_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

func TestErrorHelpers(t *testing.T) {
	cause := errors.New("boom")
	type verdict struct {
		NotFound, Capacity, NotReady, Create bool
	}
	tests := []struct {
		name string
		err  error
		want verdict
	}{
		{name: "nil", err: nil, want: verdict{}},
		{name: "plain error", err: cause, want: verdict{}},
		{name: "not found", err: cloudprovider.NewNodeClaimNotFoundError(cause), want: verdict{NotFound: true}},
		{name: "not found wrapped", err: fmt.Errorf("getting instance, %w", cloudprovider.NewNodeClaimNotFoundError(cause)), want: verdict{NotFound: true}},
		{name: "capacity", err: cloudprovider.NewInsufficientCapacityError(cause), want: verdict{Capacity: true}},
		{name: "capacity wrapped twice", err: fmt.Errorf("a, %w", fmt.Errorf("b, %w", cloudprovider.NewInsufficientCapacityError(nil))), want: verdict{Capacity: true}},
		{name: "not ready", err: cloudprovider.NewNodeClassNotReadyError(cause), want: verdict{NotReady: true}},
		{name: "not ready joined", err: errors.Join(cause, cloudprovider.NewNodeClassNotReadyError(cause)), want: verdict{NotReady: true}},
		{name: "create", err: cloudprovider.NewCreateError(cause, "LaunchTemplateNotFound", "msg"), want: verdict{Create: true}},
		{name: "create wrapped", err: fmt.Errorf("launching nodeclaim, %w", cloudprovider.NewCreateError(cause, "R", "m")), want: verdict{Create: true}},
		{name: "create wrapping capacity", err: cloudprovider.NewCreateError(cloudprovider.NewInsufficientCapacityError(cause), "R", "m"), want: verdict{Capacity: true, Create: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := verdict{
				NotFound: cloudprovider.IsNodeClaimNotFoundError(tt.err),
				Capacity: cloudprovider.IsInsufficientCapacityError(tt.err),
				NotReady: cloudprovider.IsNodeClassNotReadyError(tt.err),
				Create:   cloudprovider.IsCreateError(tt.err),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Is* helpers (-want +got):\n%s", diff)
			}
			ignored := verdict{
				NotFound: cloudprovider.IgnoreNodeClaimNotFoundError(tt.err) == nil,
				Capacity: cloudprovider.IgnoreInsufficientCapacityError(tt.err) == nil,
				NotReady: cloudprovider.IgnoreNodeClassNotReadyError(tt.err) == nil,
				Create:   cloudprovider.IgnoreCreateError(tt.err) == nil,
			}
			wantIgnored := tt.want
			if tt.err == nil {
				wantIgnored = verdict{true, true, true, true}
			}
			if diff := cmp.Diff(wantIgnored, ignored); diff != "" {
				t.Errorf("Ignore* helpers returned nil (-want +got):\n%s", diff)
			}
			if tt.err != nil && !errors.Is(tt.err, cause) && tt.name != "capacity wrapped twice" {
				t.Errorf("errors.Is(err, cause) = false: the typed error must unwrap to its cause")
			}
		})
	}
}

func TestCreateErrorCondition(t *testing.T) {
	err := fmt.Errorf("launching nodeclaim, %w", cloudprovider.NewCreateError(errors.New("denied"), "LaunchFailed", "ec2:RunInstances denied"))
	got := cloudprovider.AsCreateError(err)
	if got == nil {
		t.Fatal("AsCreateError returned nil for a wrapped CreateError")
	}
	if diff := cmp.Diff([]string{"LaunchFailed", "ec2:RunInstances denied", "launching nodeclaim, creating nodeclaim, denied"},
		[]string{got.ConditionReason, got.ConditionMessage, err.Error()}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if cloudprovider.AsCreateError(errors.New("x")) != nil {
		t.Error("AsCreateError returned a CreateError for a plain error")
	}
}
