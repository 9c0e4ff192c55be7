package awsemu_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TestManyLargeResponses guards the client-side race sdk.PlainBodies works around: many requests
// with large responses over reused connections.
func TestManyLargeResponses(t *testing.T) {
	e := newEnv(t)
	for range 30 {
		p := ec2.NewDescribeInstanceTypeOfferingsPaginator(e.ec2, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: ec2types.LocationTypeAvailabilityZone})
		for p.HasMorePages() {
			if _, err := p.NextPage(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
}
