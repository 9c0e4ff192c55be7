package instance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/joinerhq/joiner/pkg/aws/batcher"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// The DescribeInstances (by ID) and TerminateInstances batchers' windows and size, upstream
// Karpenter's: IDs asked within 100 ms of each other, for at most a second, up to 500, go in one
// call.
const (
	IDsIdle     = 100 * time.Millisecond
	IDsMax      = time.Second
	IDsMaxItems = 500
)

// errNotFound is an ID's share of a batched call when EC2 does not know the instance.
var errNotFound = errors.New("instance not found")

// isNotFound reports whether EC2 refused the call for an unknown or malformed instance ID: it
// then refuses the whole call, whichever of its IDs is wrong.
func isNotFound(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "InvalidInstanceID.NotFound" || ae.ErrorCode() == "InvalidInstanceID.Malformed")
}

// byID runs call on the unique IDs at once and, when EC2 refuses the call for an unknown ID,
// on each ID alone, so that one ID's error does not fail the others. Its result is each ID's
// share: call's answer, errNotFound, or the call's error.
func byID[Out any](ctx context.Context, ids []string, call func(ctx context.Context, ids []string) (map[string]Out, error)) []batcher.Result[Out] {
	unique := slices.Compact(slices.Sorted(slices.Values(ids)))
	got, err := call(ctx, unique)
	answers := map[string]batcher.Result[Out]{}
	switch {
	case err == nil:
		for _, id := range unique {
			answers[id] = batcher.Result[Out]{Out: got[id]}
		}
	case isNotFound(err) && len(unique) > 1:
		for _, id := range unique {
			one, err := call(ctx, []string{id})
			if isNotFound(err) {
				err = errNotFound
			}
			answers[id] = batcher.Result[Out]{Out: one[id], Err: err}
		}
	default:
		if isNotFound(err) {
			err = errNotFound
		}
		for _, id := range unique {
			answers[id] = batcher.Result[Out]{Err: err}
		}
	}
	out := make([]batcher.Result[Out], len(ids))
	for i, id := range ids {
		out[i] = answers[id]
	}
	return out
}

// describeIDs is the DescribeInstances batcher's executor: one call for the batch's IDs. An ID
// EC2 does not list has a nil share.
func (p *Provider) describeIDs(ctx context.Context, _ string, ids []string) []batcher.Result[*ec2types.Instance] {
	return byID(ctx, ids, func(ctx context.Context, ids []string) (map[string]*ec2types.Instance, error) {
		out := map[string]*ec2types.Instance{}
		pages := ec2.NewDescribeInstancesPaginator(p.ec2, &ec2.DescribeInstancesInput{InstanceIds: ids})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			for _, r := range page.Reservations {
				for _, i := range r.Instances {
					if i.InstanceId != nil {
						out[*i.InstanceId] = &i
					}
				}
			}
		}
		return out, nil
	})
}

// terminateIDs is the TerminateInstances batcher's executor: one call for the batch's IDs.
func (p *Provider) terminateIDs(ctx context.Context, _ string, ids []string) []batcher.Result[struct{}] {
	return byID(ctx, ids, func(ctx context.Context, ids []string) (map[string]struct{}, error) {
		_, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})
		return nil, err
	})
}

// describe describes one instance through the batcher; nil when EC2 does not know it.
func (p *Provider) describe(ctx context.Context, id string) (*ec2types.Instance, error) {
	inst, err := p.describes.Do(ctx, "", id)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	return inst, err
}

// terminate terminates one instance through the batcher: a NodeClaimNotFoundError when EC2 does
// not know it.
func (p *Provider) terminate(ctx context.Context, id string) error {
	_, err := p.terminates.Do(ctx, "", id)
	if errors.Is(err, errNotFound) {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("instance %s not found", id))
	}
	if err != nil {
		return fmt.Errorf("terminating instance %s, %w", id, err)
	}
	return nil
}
