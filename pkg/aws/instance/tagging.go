package instance

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TaggingRate and TaggingBurst pace Tag, one CreateTags per instance: half of EC2's CreateTags
// bucket (100 requests, 10 a second; pkg/aws/apilimits), leaving the rest to the launch
// templates' and anyone else's tagging in the account. A scale-up of hundreds of nodes has its
// instances tagged within a minute of registering; a NodeClaim skipped is tagged at its next
// drift check.
const (
	TaggingRate  = 5
	TaggingBurst = 50
)

// Tag adds to the instance the tags it lacks or carries with another value, in one CreateTags,
// when the pace allows (TaggingRate): it reports whether it tagged. A caller skipped tries again
// later (the drift check of each NodeClaim runs on a timer). The instance's remembered
// description (Recent) is updated with the tags.
func (p *Provider) Tag(ctx context.Context, inst *Instance, tags map[string]string) (bool, error) {
	missing := map[string]string{}
	for k, v := range tags {
		if have, ok := inst.Tags[k]; !ok || have != v {
			missing[k] = v
		}
	}
	if len(missing) == 0 || !p.tagging.AllowN(p.clock.Now(), 1) {
		return false, nil
	}
	var ts []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(missing)) {
		ts = append(ts, ec2types.Tag{Key: aws.String(k), Value: aws.String(missing[k])})
	}
	if _, err := p.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{inst.ID}, Tags: ts}); err != nil {
		return false, fmt.Errorf("tagging instance %s, %w", inst.ID, err)
	}
	p.recent.tagged(inst.ID, missing)
	return true, nil
}
