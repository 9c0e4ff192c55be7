package ami_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/ami"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

// karpenterReadPolicy is the part of Karpenter's documented controller policy that AMI resolution
// needs: ssm:GetParameter (not GetParameters) on the public AWS parameters, and DescribeImages. A
// controller role set up for Karpenter must resolve aliases under Joiner unchanged.
const karpenterReadPolicy = `{"Version":"2012-10-17","Statement":[
 {"Sid":"AllowSSMReadActions","Effect":"Allow","Action":"ssm:GetParameter","Resource":"arn:aws:ssm:us-west-2::parameter/aws/service/*"},
 {"Sid":"AllowRegionalReadActions","Effect":"Allow","Action":"ec2:DescribeImages","Resource":"*"}]}`

func TestResolveAliasWithKarpenterControllerPolicy(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st, err := awsemu.NewState(clk, state.DefaultSeed())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(w *state.World) error {
		w.PutRole(state.DefaultSeed().ControllerRole, map[string]string{"controller": karpenterReadPolicy})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awsemu.New(st, clk))
	t.Cleanup(srv.Close)
	cfg, err := sdk.LoadConfig(t.Context(), sdk.Options{Region: "us-west-2", Endpoint: srv.URL, MaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(state.DefaultSeed().ControllerAccessKey, "secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	clients := sdk.NewClients(cfg)

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
