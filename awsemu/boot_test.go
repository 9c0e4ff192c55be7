package awsemu_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joinerhq/joiner/awsemu/boot"
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
				SubnetId: aws.String(f.subnets["us-west-2a"]), UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n" + tt.userData + "\n"))),
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
