package iampolicy

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Output formats of Render.
const (
	FormatJSON           = "json"
	FormatCloudFormation = "cloudformation"
)

// ManagedPolicyName is the name the CloudFormation template gives the policy.
func ManagedPolicyName(clusterName string) string { return "JoinerControllerPolicy-" + clusterName }

// Render prints the policy of o: FormatJSON is the policy document, indented, as `aws iam
// create-policy --policy-document` takes it; FormatCloudFormation is a template with one
// AWS::IAM::ManagedPolicy (attach its output PolicyArn to the controller's role).
func Render(o Options, format string) ([]byte, error) {
	doc := New(o)
	switch format {
	case FormatJSON:
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encoding the policy, %w", err)
		}
		return append(out, '\n'), nil
	case FormatCloudFormation:
		template := map[string]any{
			"AWSTemplateFormatVersion": "2010-09-09",
			"Description":              fmt.Sprintf("The IAM policy of Joiner's controller for EKS cluster %s in %s (joiner iam-policy)", o.ClusterName, o.Region),
			"Resources": map[string]any{
				"JoinerControllerPolicy": map[string]any{
					"Type": "AWS::IAM::ManagedPolicy",
					"Properties": map[string]any{
						"ManagedPolicyName": ManagedPolicyName(o.ClusterName),
						"PolicyDocument":    doc,
					},
				},
			},
			"Outputs": map[string]any{
				"PolicyArn": map[string]any{"Value": map[string]string{"Ref": "JoinerControllerPolicy"}},
			},
		}
		out, err := yaml.Marshal(template)
		if err != nil {
			return nil, fmt.Errorf("encoding the template, %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("-o %q is not a format: use json or cloudformation", format)
}
