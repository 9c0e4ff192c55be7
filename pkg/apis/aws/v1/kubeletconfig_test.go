package v1

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestKubeletConfigurationJSON(t *testing.T) {
	in := `{"maxPods":42,"registryPullQPS":10,"featureGates":{"A":true},"systemReserved":{"cpu":"100m"}}`
	var k KubeletConfiguration
	if err := json.Unmarshal([]byte(in), &k); err != nil {
		t.Fatal(err)
	}
	if k.MaxPods == nil || *k.MaxPods != 42 || k.SystemReserved["cpu"] != "100m" {
		t.Errorf("declared fields not read: %+v", k)
	}
	if len(k.Other) != 2 || string(k.Other["registryPullQPS"].Raw) != "10" || string(k.Other["featureGates"].Raw) != `{"A":true}` {
		t.Errorf("Other = %v, want registryPullQPS and featureGates", k.Other)
	}
	out, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	_ = json.Unmarshal([]byte(in), &want)
	_ = json.Unmarshal(out, &got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("written back (-read +written):\n%s", diff)
	}
}

func TestValidateOther(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings, one per problem, in order
	}{
		{name: "valid fields of every type", in: `{"registryPullQPS":10,"containerLogMaxSize":"50Mi","shutdownGracePeriod":"45s",
			"allowedUnsafeSysctls":["net.core.somaxconn"],"serializeImagePulls":false,"featureGates":{"A":true},"memoryThrottlingFactor":0.9}`},
		{name: "unknown field", in: `{"registryPullQps":10}`,
			want: []string{"spec.kubelet.registryPullQps is not a field of the kubelet's configuration"}},
		{name: "wrong types", in: `{"registryPullQPS":"10","shutdownGracePeriod":"soon","serializeImagePulls":"no","eventBurst":1.5}`,
			want: []string{"spec.kubelet.eventBurst must be an integer", "spec.kubelet.registryPullQPS must be an integer",
				"spec.kubelet.serializeImagePulls must be a boolean", "spec.kubelet.shutdownGracePeriod must be a duration"}},
		{name: "owned by Joiner", in: `{"registerWithTaints":[{"key":"a","effect":"NoSchedule"}]}`,
			want: []string{"spec.kubelet.registerWithTaints cannot be set: Joiner sets it"}},
		{name: "kind and apiVersion are not fields", in: `{"kind":"KubeletConfiguration"}`,
			want: []string{"spec.kubelet.kind is not a field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k KubeletConfiguration
			if err := json.Unmarshal([]byte(tt.in), &k); err != nil {
				t.Fatal(err)
			}
			got := k.ValidateOther()
			if len(got) != len(tt.want) {
				t.Fatalf("ValidateOther = %q, want %d problems", got, len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestKubeletConfigurationJSONDeclaredOnly checks that without undeclared fields the JSON is
// exactly that of the declared fields, as encoding/json wrote the struct before spec.kubelet was
// opened: hashes of such classes (drift) do not change.
func TestKubeletConfigurationJSONDeclaredOnly(t *testing.T) {
	maxPods, high := int32(20), int32(85)
	for _, k := range []KubeletConfiguration{
		{MaxPods: &maxPods, ImageGCHighThresholdPercent: &high},
		{MaxPods: &maxPods, ImageGCHighThresholdPercent: &high, Other: map[string]apiextensionsv1.JSON{}},
	} {
		out, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"maxPods":20,"imageGCHighThresholdPercent":85}`; string(out) != want {
			t.Errorf("json = %s, want %s", out, want)
		}
	}
}
