package instance

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// MaxAdoptionChecks is the most NodeClaims one DescribeInstances looks for (ForNodeClaim): the
// values of one tag filter are kept to a modest number (the limit EC2 applies to them was not
// checked), and more checks at once go in several calls.
const MaxAdoptionChecks = 100

// adoptions merges the ForNodeClaim calls of concurrent launches: while one DescribeInstances
// is in flight, the NodeClaims asked for meanwhile gather in the next, so that a scale-up of
// hundreds of NodeClaims launched by many workers at once makes a few calls, not one per launch.
// A lone call is not delayed: it goes at once when none is in flight.
type adoptions struct {
	mu sync.Mutex
	// open is the batch still taking NodeClaims, or nil.
	open *adoption
	// flight is held by the batch whose call is in flight.
	flight sync.Mutex
}

// adoption is one DescribeInstances for a set of NodeClaims; found and err are set before done
// is closed.
type adoption struct {
	names []string
	done  chan struct{}
	found map[string]*Instance
	err   error
}

// ForNodeClaim returns the oldest pending or running instance of the cluster (tagged
// kubernetes.io/cluster/<name>) tagged karpenter.sh/nodeclaim=<nodeClaim>, or nil when there is
// none. Several exist only after a duplicate launch; the others are left to garbage collection.
// DescribeInstances is eventually consistent: an instance launched moments ago may not be found.
// Concurrent calls share DescribeInstances calls (adoptions); a failed call fails every
// NodeClaim it looked for.
func (p *Provider) ForNodeClaim(ctx context.Context, nodeClaim string) (*Instance, error) {
	a := &p.adoptions
	a.mu.Lock()
	b, lead := a.open, false
	if b == nil || len(b.names) >= MaxAdoptionChecks {
		b, lead = &adoption{done: make(chan struct{})}, true
		a.open = b
	}
	if !slices.Contains(b.names, nodeClaim) {
		b.names = append(b.names, nodeClaim)
	}
	a.mu.Unlock()
	if lead {
		// Until the call in flight returns, this batch takes the NodeClaims asked for meanwhile.
		a.flight.Lock()
		a.mu.Lock()
		if a.open == b {
			a.open = nil
		}
		a.mu.Unlock()
		b.found, b.err = p.forNodeClaims(ctx, b.names)
		close(b.done)
		a.flight.Unlock()
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("finding the instance of nodeclaim %s, %w", nodeClaim, ctx.Err())
	}
	if b.err != nil {
		return nil, fmt.Errorf("finding the instance of nodeclaim %s, %w", nodeClaim, b.err)
	}
	return b.found[nodeClaim].cloneOrNil(), nil
}

// forNodeClaims is one paginated DescribeInstances for the pending and running instances of
// the cluster tagged with any of the NodeClaims' names: the oldest of each, by name.
func (p *Provider) forNodeClaims(ctx context.Context, names []string) (map[string]*Instance, error) {
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{awsv1.TagKeyPrefixCluster + p.clusterName}},
		{Name: aws.String("tag:" + awsv1.TagKeyNodeClaim), Values: names},
		{Name: aws.String("instance-state-name"), Values: []string{string(ec2types.InstanceStateNamePending), string(ec2types.InstanceStateNameRunning)}},
	}}
	oldest := map[string]*Instance{}
	pages := ec2.NewDescribeInstancesPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				inst := read(i)
				name := inst.Tags[awsv1.TagKeyNodeClaim]
				// The filters are EC2's; check them again so that a looser EC2API cannot adopt
				// another NodeClaim's or a terminated instance.
				if _, ours := inst.Tags[awsv1.TagKeyPrefixCluster+p.clusterName]; !ours || !slices.Contains(names, name) ||
					(inst.State != string(ec2types.InstanceStateNamePending) && inst.State != string(ec2types.InstanceStateNameRunning)) {
					continue
				}
				if o := oldest[name]; o == nil || inst.LaunchTime.Before(o.LaunchTime) ||
					(inst.LaunchTime.Equal(o.LaunchTime) && inst.ID < o.ID) {
					oldest[name] = inst
				}
			}
		}
	}
	return oldest, nil
}

func (i *Instance) cloneOrNil() *Instance {
	if i == nil {
		return nil
	}
	return i.clone()
}
