package boot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestInterpretLocalDisksRAID0 checks that each family's instance-store RAID0 setting, as Joiner
// writes it, puts the node's ephemeral storage on the instance store, and that without it the
// root volume holds it.
func TestInterpretLocalDisksRAID0(t *testing.T) {
	brBase := "[settings.kubernetes]\ncluster-name = \"demo\"\napi-server = \"" + testEndpoint + "\"\ncluster-certificate = \"" + testCAB64 + "\"\n" +
		"[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n"
	brRAID0 := brBase + "[settings.bootstrap-commands.000-mount-instance-storage]\n" +
		"commands = [[\"apiclient\", \"ephemeral-storage\", \"init\"], [\"apiclient\", \"ephemeral-storage\", \"bind\", \"--dirs\", \"/var/lib/containerd\", \"/var/lib/kubelet\", \"/var/log/pods\"]]\n" +
		"essential = true\nmode = \"always\"\n"
	al2 := `/etc/eks/bootstrap.sh demo --b64-cluster-ca $CA --apiserver-endpoint $URL --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'`
	tests := []struct {
		name, family, userData string
		want                   bool
	}{
		{"AL2 --local-disks raid0", "AL2", al2Script(al2 + " --local-disks raid0"), true},
		{"AL2 without", "AL2", al2Script(al2), false},
		{"AL2023 localStorage RAID0", "AL2023", mimeDoc(generatedNodeConfig, nodeConfigPart("  instance:\n    localStorage:\n      strategy: RAID0\n")), true},
		{"AL2023 without", "AL2023", mimeDoc(generatedNodeConfig), false},
		{"Bottlerocket ephemeral-storage init", "Bottlerocket", brRAID0, true},
		{"Bottlerocket without", "Bottlerocket", brBase, false},
	}
	const gb = int64(1000 * 1000 * 1000)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInstance(tt.family, tt.userData)
			in.InstanceType, in.InstanceStoreGB = "m5d.large", 100
			reg, _, err := Interpret(in, testCluster())
			if err != nil {
				t.Fatalf("Interpret: %v", err)
			}
			if reg.LocalDisksRAID0 != tt.want {
				t.Fatalf("LocalDisksRAID0 = %v, want %v", reg.LocalDisksRAID0, tt.want)
			}
			capacity, allocatable := resourcesFor(in, reg)
			wantCapacity, wantAlloc := int64(20<<30), int64(20<<30-1<<30-(20<<30)/10)
			if tt.want {
				wantCapacity, wantAlloc = 100*gb, 100*gb-1<<30-10*gb
			}
			if got := capacity[corev1.ResourceEphemeralStorage]; got.Value() != wantCapacity {
				t.Errorf("ephemeral-storage capacity = %d, want %d", got.Value(), wantCapacity)
			}
			if got := allocatable[corev1.ResourceEphemeralStorage]; got.Value() != wantAlloc {
				t.Errorf("ephemeral-storage allocatable = %d, want %d", got.Value(), wantAlloc)
			}
		})
	}
}
