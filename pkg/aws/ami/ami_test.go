package ami

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestAliasParameters(t *testing.T) {
	names := func(ps []Parameter) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Architecture+" "+p.Variant+" "+p.Name)
		}
		return out
	}
	tests := []struct {
		alias string
		want  []string
	}{
		{alias: "al2023@latest", want: []string{
			"amd64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id",
			"amd64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/recommended/image_id",
			"amd64 neuron /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/recommended/image_id",
			"arm64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/recommended/image_id",
			"arm64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/recommended/image_id",
		}},
		{alias: "al2023@v20240807", want: []string{
			"amd64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.31-v20240807/image_id",
			"amd64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.31-v20240807/image_id",
			"amd64 neuron /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/neuron/amazon-eks-node-al2023-x86_64-neuron-1.31-v20240807/image_id",
			"arm64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.31-v20240807/image_id",
			"arm64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.31-v20240807/image_id",
		}},
		{alias: "al2@latest", want: []string{
			"amd64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id",
			"arm64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id",
			"amd64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id",
		}},
		{alias: "al2@v20240807", want: []string{
			"amd64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2/amazon-eks-node-1.31-v20240807/image_id",
			"arm64 standard /aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/amazon-eks-arm64-node-1.31-v20240807/image_id",
			"amd64 nvidia /aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/amazon-eks-gpu-node-1.31-v20240807/image_id",
		}},
		{alias: "bottlerocket@v1.20.3", want: []string{
			"amd64 standard /aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.3/image_id",
			"arm64 standard /aws/service/bottlerocket/aws-k8s-1.31/arm64/1.20.3/image_id",
			"amd64 nvidia /aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/1.20.3/image_id",
			"arm64 nvidia /aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/1.20.3/image_id",
		}},
	}
	for _, tt := range tests {
		got, err := AliasParameters(tt.alias, "1.31")
		if err != nil {
			t.Fatalf("%s: %v", tt.alias, err)
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.alias, diff)
		}
		for _, p := range got {
			if p.Mutable != (tt.alias[len(tt.alias)-6:] == "latest") {
				t.Errorf("%s: %s Mutable = %v", tt.alias, p.Name, p.Mutable)
			}
		}
	}
	for _, bad := range []string{"al2023", "ubuntu@latest", "al2023@"} {
		if _, err := AliasParameters(bad, "1.31"); err == nil {
			t.Errorf("AliasParameters(%q) succeeded", bad)
		}
	}
}

func TestSelect(t *testing.T) {
	amd := requirements("amd64", VariantStandard)
	arm := requirements("arm64", VariantStandard)
	// The same set written in another order is the same set.
	amdReordered := []corev1.NodeSelectorRequirement{amd[2], amd[0], amd[1]}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	images := []Image{
		{ID: "ami-amd-old", CreationDate: day(1), Requirements: amd},
		{ID: "ami-amd-new", CreationDate: day(5), Requirements: amdReordered},
		{ID: "ami-amd-newest-deprecated", CreationDate: day(9), Deprecated: true, Requirements: amd},
		{ID: "ami-arm-dep1", CreationDate: day(2), Deprecated: true, Requirements: arm},
		{ID: "ami-arm-dep2", CreationDate: day(3), Deprecated: true, Requirements: arm},
	}
	var got []string
	for _, a := range Select(images) {
		got = append(got, a.ID)
	}
	if diff := cmp.Diff([]string{"ami-amd-new", "ami-arm-dep2"}, got); diff != "" {
		t.Errorf("Select (-want +got):\n%s", diff)
	}
}
