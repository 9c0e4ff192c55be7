package instance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/internal/testkit"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// describer answers DescribeInstances with one running instance of the cluster per NodeClaim
// named in the tag filter (none for names starting "new-"), records each call's names, and holds
// the first call until release is closed.
type describer struct {
	EC2API
	entered chan struct{}
	release chan struct{}

	mu    sync.Mutex
	calls [][]string
}

func (d *describer) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	d.mu.Lock()
	var names []string
	for _, f := range in.Filters {
		if aws.ToString(f.Name) == "tag:"+awsv1.TagKeyNodeClaim {
			names = f.Values
		}
	}
	d.calls = append(d.calls, names)
	first := len(d.calls) == 1
	d.mu.Unlock()
	if first {
		close(d.entered)
		<-d.release
	}
	out := &ec2.DescribeInstancesOutput{}
	for i, name := range names {
		if len(name) > 4 && name[:4] == "new-" {
			continue
		}
		out.Reservations = append(out.Reservations, ec2types.Reservation{Instances: []ec2types.Instance{{
			InstanceId: aws.String(fmt.Sprintf("i-%017d", i)), State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning},
			Tags: []ec2types.Tag{{Key: aws.String(awsv1.TagKeyPrefixCluster + "demo"), Value: aws.String("owned")}, {Key: aws.String(awsv1.TagKeyNodeClaim), Value: aws.String(name)}},
		}}})
	}
	return out, nil
}

// TestAdoptionChecksShareCalls: launches checking for an earlier instance while another check is
// in flight share the next DescribeInstances, and each gets its own NodeClaim's instance or nil.
func TestAdoptionChecksShareCalls(t *testing.T) {
	d := &describer{entered: make(chan struct{}), release: make(chan struct{})}
	p := NewProvider(d, nil, nil, "demo", clocktesting.NewFakeClock(time.Now()))
	type result struct {
		name string
		inst *Instance
		err  error
	}
	results := make(chan result, 10)
	check := func(name string) {
		inst, err := p.ForNodeClaim(t.Context(), name)
		results <- result{name, inst, err}
	}
	go check("first")
	<-d.entered
	names := []string{"a", "b", "new-c", "d", "new-e"}
	for _, name := range names {
		go check(name)
	}
	testkit.Eventually(t, 10*time.Second, func() string {
		p.adoptions.mu.Lock()
		defer p.adoptions.mu.Unlock()
		if p.adoptions.open == nil || len(p.adoptions.open.names) != len(names) {
			return "not every check waits for the call in flight"
		}
		return ""
	})
	close(d.release)
	for range len(names) + 1 {
		r := <-results
		switch {
		case r.err != nil:
			t.Errorf("%s: %v", r.name, r.err)
		case (r.inst == nil) != (len(r.name) > 4 && r.name[:4] == "new-"):
			t.Errorf("%s: instance %+v", r.name, r.inst)
		case r.inst != nil && r.inst.Tags[awsv1.TagKeyNodeClaim] != r.name:
			t.Errorf("%s: got the instance of %s", r.name, r.inst.Tags[awsv1.TagKeyNodeClaim])
		}
	}
	if len(d.calls) != 2 || len(d.calls[1]) != len(names) {
		t.Errorf("calls %v, want one for the first check and one for the %d that waited", d.calls, len(names))
	}
}
