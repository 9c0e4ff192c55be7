package awsemu_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	boot "github.com/joinerhq/joiner/awsemu/legacyboot"
	"github.com/joinerhq/joiner/awsemu/state"
)

func TestInstancesBootTheirUserData(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	al2, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-1.31-v20251101"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		userData string
		phase    string
		console  string
		taints   int
	}{
		{"S2 one-word form boots without the taint",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'`,
			state.BootKubeletRunning, `ignoring positional argument "--kubelet-extra-args=`, 0},
		{"two-word form boots with the taint",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`,
			state.BootKubeletRunning, "kubelet: starting for cluster demo", 1},
		{"malformed kubelet arguments never start the kubelet",
			`/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=oops'`,
			state.BootFailed, "invalid taint spec", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
				MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: al2.Images[0].ImageId, InstanceType: ec2types.InstanceTypeT3Medium,
				IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("KarpenterNodeRole-demo")},
				SubnetId:           aws.String(f.subnets["us-west-2a"]), UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n" + tt.userData + "\n"))),
			})
			if err != nil {
				t.Fatal(err)
			}
			id := *run.Instances[0].InstanceId
			e.clock.Step(state.PendingFor + boot.Delay)
			out, err := e.ec2.GetConsoleOutput(t.Context(), &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
			if err != nil {
				t.Fatal(err)
			}
			console, err := base64.StdEncoding.DecodeString(*out.Output)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(console), tt.console) {
				t.Errorf("console does not contain %q:\n%s", tt.console, console)
			}
			var phase string
			e.state.View(func(w *state.World) { phase = w.Regions["us-west-2"].Instances[id].BootPhase })
			if phase != tt.phase {
				t.Errorf("boot phase %q, want %q", phase, tt.phase)
			}
			k, ok := e.booter.Kubelet(id)
			if ok != (tt.phase == state.BootKubeletRunning) || (ok && len(k.Taints) != tt.taints) {
				t.Errorf("kubelet %+v (started %v), want %d taints", k, ok, tt.taints)
			}
		})
	}
}

func TestUnmappedNodeRoleNeverJoins(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	// S1: the cluster has no access entry for the node role and aws-auth maps the controller's.
	_ = e.state.Update(func(w *state.World) error {
		w.Regions["us-west-2"].Clusters["demo"].AccessEntries = map[string]*state.AccessEntry{}
		return nil
	})
	e.booter.SetAWSAuth("- rolearn: arn:aws:iam::111122223333:role/JoinerControllerRole\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n")
	al2, err := e.ec2.DescribeImages(t.Context(), &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-1.31-v20251101"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: al2.Images[0].ImageId, InstanceType: ec2types.InstanceTypeT2Small,
		SubnetId: aws.String(f.subnets["us-west-2a"]), IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("KarpenterNodeRole-demo")},
		UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n/etc/eks/bootstrap.sh demo\n"))),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	e.clock.Step(state.PendingFor + boot.Delay)
	out, err := e.ec2.GetConsoleOutput(t.Context(), &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	console, _ := base64.StdEncoding.DecodeString(*out.Output)
	if !strings.Contains(string(console), "Unable to register node with API server: Unauthorized") {
		t.Errorf("console:\n%s", console)
	}
	var phase string
	e.state.View(func(w *state.World) { phase = w.Regions["us-west-2"].Instances[id].BootPhase })
	if phase != state.BootUnauthorized {
		t.Errorf("boot phase %q, want %q", phase, state.BootUnauthorized)
	}
}
