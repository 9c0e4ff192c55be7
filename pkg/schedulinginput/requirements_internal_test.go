package schedulinginput

import (
	"cmp"
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
	withClass := func(np *v1.NodePool) *v1.NodePool {
		np.Spec.Template.Spec.NodeClassRef = &v1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
		return np
	}
	tests := []struct {
		name    string
		np      *v1.NodePool
		refused bool
		// message and most are in the reason's message; "names 99 keys" and "at most 98 keys"
		// when empty.
		message, most string
	}{
		{name: "98 keys and the two Joiner adds", np: pool(98)},
		{name: "99 keys", np: pool(99), refused: true},
		{name: "98 keys besides the instance type and the nodepool, which count once", np: pool(98, corev1.LabelInstanceTypeStable, v1.NodePoolLabelKey)},
		{name: "one key twice counts once", np: pool(97, "example.com/label-0")},
		// A node class adds its label (karpenter.k8s.aws/ec2nodeclass) to every NodeClaim.
		{name: "97 keys and the three Joiner adds with a node class", np: withClass(pool(97))},
		{name: "98 keys with a node class", np: withClass(pool(98)), refused: true, message: "names 98 keys", most: "at most 97 keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tooManyRequirements(tt.np)
			if (got != nil) != tt.refused {
				t.Fatalf("tooManyRequirements = %+v, want refused %t", got, tt.refused)
			}
			message, most := cmp.Or(tt.message, "names 99 keys"), cmp.Or(tt.most, "at most 98 keys")
			if got != nil && (got.Code != "TooManyRequirements" || !strings.Contains(got.Message, "spec.template.spec.requirements "+message) ||
				!strings.Contains(got.Message, most)) {
				t.Errorf("reason %s: %s", got.Code, got.Message)
			}
		})
	}
}
