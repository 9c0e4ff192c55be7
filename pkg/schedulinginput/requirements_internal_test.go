package schedulinginput

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestTooManyRequirements(t *testing.T) {
	pool := func(keys int, extra ...string) *v1.NodePool {
		np := &v1.NodePool{}
		np.Name = "many"
		for i := range keys {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
				Key: fmt.Sprintf("example.com/label-%d", i), Operator: v1.NodeSelectorOpIn, Values: []string{"v"}})
		}
		for _, k := range extra {
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, v1.NodeSelectorRequirementWithMinValues{
				Key: k, Operator: v1.NodeSelectorOpExists})
		}
		return np
	}
	tests := []struct {
		name    string
		np      *v1.NodePool
		refused bool
	}{
		{name: "98 keys and the two Joiner adds", np: pool(98)},
		{name: "99 keys", np: pool(99), refused: true},
		{name: "98 keys besides the instance type and the nodepool, which count once", np: pool(98, corev1.LabelInstanceTypeStable, v1.NodePoolLabelKey)},
		{name: "one key twice counts once", np: pool(97, "example.com/label-0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tooManyRequirements(tt.np)
			if (got != nil) != tt.refused {
				t.Fatalf("tooManyRequirements = %+v, want refused %t", got, tt.refused)
			}
			if got != nil && (got.Code != "TooManyRequirements" || !strings.Contains(got.Message, "spec.template.spec.requirements names 99 keys") ||
				!strings.Contains(got.Message, "at most 98 keys")) {
				t.Errorf("reason %s: %s", got.Code, got.Message)
			}
		})
	}
}
