package awsemu_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinerhq/joiner/awsemu/inspect"
)

func TestInspectionEndpoint(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, e.url+"/_awsemu/faults",
		strings.NewReader(`{"insufficientCapacity": [{"instanceType": "m5.large", "zone": "us-west-2a", "capacityType": "on-demand"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT faults: %s", resp.Status)
	}
	_, err = e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets["us-west-2a"])})
	wantCode(t, err, "InsufficientInstanceCapacity", "injected capacity fault")
	if _, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets["us-west-2b"])}); err != nil {
		t.Fatal(err)
	}
	get, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.url+"/_awsemu/instances", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var insts []inspect.Instance
	if err := json.NewDecoder(resp.Body).Decode(&insts); err != nil {
		t.Fatal(err)
	}
	if len(insts) != 1 || insts[0].Zone != "us-west-2b" || insts[0].State != "pending" {
		t.Errorf("instances: %+v", insts)
	}
}
