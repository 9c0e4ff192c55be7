package ami_test

import (
	"testing"

	"github.com/joinerhq/joiner/awsemu/emutest"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/ami"
)

// karpenterReadPolicy is the part of Karpenter's documented controller policy that AMI resolution
// needs: ssm:GetParameter (not GetParameters) on the public AWS parameters, and DescribeImages. A
// controller role set up for Karpenter must resolve aliases under Joiner unchanged.
const karpenterReadPolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"AllowSSMReadActions","Effect":"Allow","Action":"ssm:GetParameter","Resource":"arn:aws:ssm:us-west-2::parameter/aws/service/*"},
 {"Sid":"AllowRegionalReadActions","Effect":"Allow","Action":"ec2:DescribeImages","Resource":"*"}]}`

func TestResolveAliasWithKarpenterControllerPolicy(t *testing.T) {
	e := emutest.Start(t)
	e.SetControllerPolicy(t, karpenterReadPolicy)
	clients, clk := e.Clients, e.Clock

	images, err := ami.Resolve(t.Context(), clients.SSM, clients.EC2, []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}, "1.33", clk.Now())
	if err != nil {
		t.Fatalf("Resolve under Karpenter's controller policy: %v", err)
	}
	arches := map[string]bool{}
	for _, img := range images {
		arches[img.Architecture] = true
	}
	if !arches["amd64"] || !arches["arm64"] {
		t.Errorf("resolved %d images of architectures %v, want amd64 and arm64", len(images), arches)
	}

	// A parameter SSM does not have is no image, not an error.
	images, err = ami.Resolve(t.Context(), clients.SSM, clients.EC2, []awsv1.AMISelectorTerm{{SSMParameter: "/aws/service/eks/optimized-ami/none/image_id"}}, "1.33", clk.Now())
	if err != nil || len(images) != 0 {
		t.Errorf("Resolve of a missing parameter = %d images, %v; want none and no error", len(images), err)
	}
}
