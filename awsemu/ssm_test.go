package awsemu_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

func TestSSMAMIParameters(t *testing.T) {
	e := newEnv(t)
	client := ssm.NewFromConfig(e.config(t, e.region, "AKIDJOINERCONTROLLER"))
	tests := []struct {
		name string
		arch string
	}{
		{"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id", "x86_64"},
		{"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/standard/recommended/image_id", "arm64"},
		{"/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/nvidia/recommended/image_id", "x86_64"},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id", "x86_64"},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id", "arm64"},
		{"/aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id", "x86_64"},
		{"/aws/service/bottlerocket/aws-k8s-1.33/arm64/latest/image_id", "arm64"},
		{"/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.33-v20251001/image_id", "x86_64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := client.GetParameter(t.Context(), &ssm.GetParameterInput{Name: aws.String(tt.name)})
			if err != nil {
				t.Fatal(err)
			}
			images, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{*out.Parameter.Value}})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(images.Images[0].Architecture); got != tt.arch {
				t.Errorf("%s resolves to an %s image", tt.name, got)
			}
		})
	}
	recommended, err := client.GetParameter(t.Context(), &ssm.GetParameterInput{Name: aws.String(tests[0].name)})
	if err != nil {
		t.Fatal(err)
	}
	images, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{ImageIds: []string{*recommended.Parameter.Value}})
	if err != nil {
		t.Fatal(err)
	}
	if *images.Images[0].Name != "amazon-eks-node-al2023-x86_64-standard-1.33-v20251101" {
		t.Errorf("recommended is %s, want the newest release", *images.Images[0].Name)
	}
	_, err = client.GetParameter(t.Context(), &ssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.20/amazon-linux-2/recommended/image_id")})
	wantCode(t, err, "ParameterNotFound", "unpublished version")
	many, err := client.GetParameters(t.Context(), &ssm.GetParametersInput{Names: []string{tests[0].name, "/nope"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(many.Parameters) != 1 || len(many.InvalidParameters) != 1 {
		t.Errorf("GetParameters: %d found, invalid %v", len(many.Parameters), many.InvalidParameters)
	}
}
