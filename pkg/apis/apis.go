// Package apis collects the API groups Joiner serves (karpenter.sh/v1 and karpenter.k8s.aws/v1)
// so that a scheme can learn all of them at once.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// AddToScheme registers every Joiner API type with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, awsv1.AddToScheme} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}
