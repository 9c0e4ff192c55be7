package boot_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/boot"
)

// The S2 userData: bootstrap.sh drops the one-word --kubelet-extra-args=..., so the Node
// registers without karpenter.sh/unregistered.
func ExampleBooter_Boot() {
	ca := base64.StdEncoding.EncodeToString([]byte("demo CA"))
	endpoint := "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com"
	launched := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	api := &boot.FakeAPIServer{
		ConfigMapFound: true,
		MapRoles: "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo\n" +
			"  username: system:node:{{EC2PrivateDNSName}}\n" +
			"  groups: [system:bootstrappers, system:nodes]\n",
	}
	b := boot.NewBooter(clocktesting.NewFakeClock(launched.Add(30*time.Second)), api)
	out := b.Boot(context.Background(), boot.Input{
		Instance: boot.Instance{
			ID: "i-0abc", Region: "us-west-2", Zone: "us-west-2a", PrivateIP: "10.0.1.23",
			PrivateDNSName: "ip-10-0-1-23.us-west-2.compute.internal", InstanceType: "t3.medium",
			Architecture: "amd64", AMIFamily: "Custom", VCPU: 2, MemoryMiB: 4096, LaunchTime: launched,
			RoleARN: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo",
			UserData: []byte("#!/bin/bash\n/etc/eks/bootstrap.sh demo --b64-cluster-ca " + ca +
				" --apiserver-endpoint " + endpoint +
				` --kubelet-extra-args='--register-with-taints="karpenter.sh/unregistered:NoExecute"'` + "\n"),
		},
		Cluster: boot.Cluster{Name: "demo", Endpoint: endpoint, CertificateAuthority: ca, KubernetesVersion: "1.33"},
	})
	fmt.Println("joined:", out.Joined)
	fmt.Println("node:", api.Registered[0].Name, api.Registered[0].Spec.ProviderID)
	fmt.Println("taints:", len(api.Registered[0].Spec.Taints))
	fmt.Println("dropped:", out.Registration.IgnoredArguments)
	fmt.Println(out.Console[len(out.Console)-1])
	// Output:
	// joined: true
	// node: ip-10-0-1-23.us-west-2.compute.internal aws:///us-west-2a/i-0abc
	// taints: 0
	// dropped: [--kubelet-extra-args=--register-with-taints="karpenter.sh/unregistered:NoExecute"]
	// [   30.070000] kubelet[3127]: I1122 12:00:30.000000    3127 kubelet_node_status.go:78] "Successfully registered node" node="ip-10-0-1-23.us-west-2.compute.internal"
}
