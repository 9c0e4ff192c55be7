package validation

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// TestValidationRefusesKubeletFields checks that a spec.kubelet field the AMI family cannot pass
// to the kubelet makes ValidationSucceeded False naming the field, and that the same fields on
// AL2023, which passes every field, validate.
func TestValidationRefusesKubeletFields(t *testing.T) {
	tests := []struct {
		name   string
		alias  string
		other  map[string]string
		reason string
		names  []string
	}{
		{name: "AL2023 passes every field", alias: "al2023@latest", other: map[string]string{"registryPullQPS": "10", "featureGates": `{"A":true}`}},
		{name: "AL2 cannot pass registryPullQPS", alias: "al2@latest", other: map[string]string{"registryPullQPS": "10"},
			reason: userdata.ReasonUnsupportedKubeletConfiguration, names: []string{"registryPullQPS"}},
		{name: "Bottlerocket cannot pass featureGates", alias: "bottlerocket@latest", other: map[string]string{"registryPullQPS": "10", "featureGates": `{"A":true}`},
			reason: userdata.ReasonUnsupportedKubeletConfiguration, names: []string{"featureGates"}},
		{name: "a misspelt field", alias: "al2023@latest", other: map[string]string{"registryPullQps": "10"},
			reason: userdata.ReasonInvalidKubeletConfiguration, names: []string{"registryPullQps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolver, _ := newResolver(t)
			nc := validationClass()
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: tt.alias}}
			nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr.To[int32](42), Other: map[string]apiextensionsv1.JSON{}}
			for k, v := range tt.other {
				nc.Spec.Kubelet.Other[k] = apiextensionsv1.JSON{Raw: []byte(v)}
			}
			_ = resolver.Resolve(t.Context(), nc)
			cond := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
			if cond == nil {
				t.Fatal("no ValidationSucceeded condition")
			}
			if tt.reason == "" {
				if cond.Status != "True" {
					t.Errorf("ValidationSucceeded %+v, want True", cond)
				}
				return
			}
			if cond.Status != "False" || cond.Reason != tt.reason {
				t.Fatalf("ValidationSucceeded %+v, want False %s", cond, tt.reason)
			}
			for _, name := range tt.names {
				if !strings.Contains(cond.Message, name) {
					t.Errorf("message %q does not name %s", cond.Message, name)
				}
			}
			if ready := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeReady); ready == nil || ready.Status == "True" {
				t.Errorf("Ready %+v, want not True while a kubelet field is refused", ready)
			}
		})
	}
}
