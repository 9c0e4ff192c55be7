package validation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/aws/launchtemplate"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// EC2API is the EC2 calls validation makes, all with DryRun; *ec2.Client satisfies it.
type EC2API interface {
	CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, opts ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error)
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	RunInstances(ctx context.Context, in *ec2.RunInstancesInput, opts ...func(*ec2.Options)) (*ec2.RunInstancesOutput, error)
}

// STSAPI decodes authorization failures; *sts.Client satisfies it.
type STSAPI interface {
	DecodeAuthorizationMessage(ctx context.Context, in *sts.DecodeAuthorizationMessageInput, opts ...func(*sts.Options)) (*sts.DecodeAuthorizationMessageOutput, error)
}

// InstanceTypes lists a node class's instance types (instancetype.Provider).
type InstanceTypes interface {
	List(ctx context.Context, nodeClass *awsv1.EC2NodeClass) ([]*cloudprovider.InstanceType, error)
}

// Validator dry-runs what a launch with a node class would call, with the class's real
// parameters. It is safe for concurrent use.
type Validator struct {
	ec2           EC2API
	explainer     *Explainer
	instanceTypes InstanceTypes
	cluster       userdata.Cluster
}

// NewValidator returns a validator for the cluster's node classes.
func NewValidator(ec2API EC2API, stsAPI STSAPI, instanceTypes InstanceTypes, cluster userdata.Cluster) *Validator {
	return &Validator{ec2: ec2API, explainer: &Explainer{sts: stsAPI}, instanceTypes: instanceTypes, cluster: cluster}
}

// Condition reasons of ValidationSucceeded=False, one per dry-run call.
const (
	ReasonCreateLaunchTemplateAuthorizationFailed = "CreateLaunchTemplateAuthorizationFailed"
	ReasonCreateFleetAuthorizationFailed          = "CreateFleetAuthorizationFailed"
	ReasonRunInstancesAuthorizationFailed         = "RunInstancesAuthorizationFailed"
	ReasonNoInstanceType                          = "NoInstanceTypeForAMI"
	ReasonUserData                                = "UserDataInvalid"
)

// Validate dry-runs, in order, CreateLaunchTemplate, CreateFleet (type instant, on-demand) and
// RunInstances with the node class's resolved status (newest AMI and its cheapest fitting
// instance type, first subnet, security groups, instance profile), its rendered userData and
// the tags a launch carries. A spec.kubelet field the AMI family cannot pass to the kubelet
// fails before anything else (userdata.CheckKubelet). A Problem in the rendered userData (the node would not register
// with the required taint) fails first, under the Problem's reason. It returns "" when EC2 answers DryRunOperation to all three; for a
// denial, the reason of the call and a message naming the denied action, the resource, the
// principal and the statement to add (Explainer). A CreateFleet dry run that gets as far as
// looking up the (not yet created) launch template has passed its authorization: the
// launch's own permissions are RunInstances', checked by the third call. Errors that are not
// EC2's answer to the request (throttling, network) are returned for a retry.
func (v *Validator) Validate(ctx context.Context, nodeClass *awsv1.EC2NodeClass) (string, string, error) {
	// A spec.kubelet field that would not reach the kubelet is refused first, naming the field,
	// under userdata's reasons (InvalidKubeletConfiguration, UnsupportedKubeletConfiguration).
	if reason, message := userdata.CheckKubelet(userdata.FamilyOf(nodeClass), nodeClass.Spec.Kubelet); reason != "" {
		return reason, message, nil
	}
	if len(nodeClass.Status.AMIs) == 0 || len(nodeClass.Status.Subnets) == 0 {
		return "", "", errors.New("validating, the node class has no resolved AMIs or subnets")
	}
	image := nodeClass.Status.AMIs[0]
	it, err := v.cheapest(ctx, nodeClass, image)
	if err != nil {
		return "", "", err
	}
	if it == nil {
		return ReasonNoInstanceType, fmt.Sprintf("no instance type of the node class meets the requirements of AMI %s", image.ID), nil
	}
	claim := &v1.NodeClaim{}
	claim.Name = "validation"
	claim.Labels = map[string]string{v1.NodePoolLabelKey: "validation"}
	rendered, err := userdata.Render(userdata.NewOptions(v.cluster, nodeClass, claim, nil))
	if err != nil {
		return ReasonUserData, err.Error(), nil
	}
	if problems := rendered.Problems(); len(problems) > 0 {
		return problems[0].Reason, problems[0].Message + " Fix: " + problems[0].Fix, nil
	}
	opts := launchtemplate.NewOptions(v.cluster.Name, nodeClass, claim.Labels[v1.NodePoolLabelKey], v1.CapacityTypeOnDemand, image.ID, rendered.UserData)
	name, err := launchtemplate.Name(opts)
	if err != nil {
		return "", "", err
	}
	subnet := nodeClass.Status.Subnets[0]
	tags := instance.Tags(v.cluster.Name, nodeClass, claim)

	_, err = v.ec2.CreateLaunchTemplate(ctx, launchtemplate.CreateInput(name, opts, true))
	if reason, message, err := v.judge(ctx, err, ReasonCreateLaunchTemplateAuthorizationFailed); reason != "" || err != nil {
		return reason, message, err
	}
	_, err = v.ec2.CreateFleet(ctx, instance.FleetInput(instance.Launch{
		CapacityType: v1.CapacityTypeOnDemand, Tags: tags,
		Overrides: []instance.Override{{InstanceType: it.Name, Zone: subnet.Zone, SubnetID: subnet.ID, LaunchTemplate: name}},
	}, true))
	if isCode(err, "InvalidLaunchTemplateName.NotFoundException") {
		err = nil
	}
	if reason, message, err := v.judge(ctx, err, ReasonCreateFleetAuthorizationFailed); reason != "" || err != nil {
		return reason, message, err
	}
	_, err = v.ec2.RunInstances(ctx, runInput(opts, it.Name, subnet.ID, tags))
	return v.judge(ctx, err, ReasonRunInstancesAuthorizationFailed)
}

// cheapest is the cheapest on-demand instance type meeting the image's architecture (and, for a
// standard image, without GPUs).
func (v *Validator) cheapest(ctx context.Context, nodeClass *awsv1.EC2NodeClass, image awsv1.AMI) (*cloudprovider.InstanceType, error) {
	its, err := v.instanceTypes.List(ctx, nodeClass)
	if err != nil {
		return nil, fmt.Errorf("validating, %w", err)
	}
	var arch []string
	gpu := false
	for _, r := range image.Requirements {
		switch r.Key {
		case corev1.LabelArchStable:
			arch = r.Values
		case awsv1.LabelInstanceGPUManufacturer:
			gpu = true
		}
	}
	var best *cloudprovider.InstanceType
	bestPrice := 0.0
	for _, it := range its {
		archs := it.Requirements[corev1.LabelArchStable]
		if len(archs) != 1 || !slices.Contains(arch, archs[0]) || (it.Requirements[awsv1.LabelInstanceGPUManufacturer] != nil) != gpu {
			continue
		}
		for _, o := range it.Offerings {
			if o.CapacityType == v1.CapacityTypeOnDemand && (best == nil || o.Price < bestPrice || (o.Price == bestPrice && it.Name < best.Name)) {
				best, bestPrice = it, o.Price
			}
		}
	}
	return best, nil
}

func runInput(o launchtemplate.Options, instanceType, subnetID string, tags map[string]string) *ec2.RunInstancesInput {
	lt := launchtemplate.CreateInput("validation", o, true).LaunchTemplateData
	var ec2Tags []ec2types.Tag
	for k, v := range tags {
		ec2Tags = append(ec2Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	slices.SortFunc(ec2Tags, func(a, b ec2types.Tag) int { return strings.Compare(*a.Key, *b.Key) })
	return &ec2.RunInstancesInput{
		DryRun: aws.Bool(true), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: lt.ImageId, InstanceType: ec2types.InstanceType(instanceType), SubnetId: aws.String(subnetID),
		SecurityGroupIds: o.SecurityGroupIDs, UserData: lt.UserData,
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String(o.InstanceProfile)},
		// The instance, its volumes and its network interface, tagged as a launch tags them (the
		// launch's network interface takes the launch template's tags), as Karpenter's validation
		// dry run does: its controller policy creates network-interface/* only with the cluster
		// and NodePool tags.
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: ec2Tags},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: ec2Tags},
			{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: ec2Tags},
		},
	}
}

// judge reads a dry run's answer: DryRunOperation passes; UnauthorizedOperation is explained
// under reason; any other API error fails with its code and message; a non-API error is
// returned.
func (v *Validator) judge(ctx context.Context, err error, reason string) (string, string, error) {
	if err == nil || isCode(err, "DryRunOperation") {
		return "", "", nil
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return "", "", fmt.Errorf("validating, %w", err)
	}
	if ae.ErrorCode() == "UnauthorizedOperation" {
		_, message := v.explainer.Explain(ctx, err)
		return reason, message, nil
	}
	if strings.Contains(ae.ErrorCode(), "Throttl") || ae.ErrorCode() == "RequestLimitExceeded" {
		return "", "", fmt.Errorf("validating, %w", err)
	}
	return strings.TrimSuffix(reason, "AuthorizationFailed") + "Failed", fmt.Sprintf("%s: %s", ae.ErrorCode(), ae.ErrorMessage()), nil
}

func isCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// Explainer turns an UnauthorizedOperation into a condition reason and message through STS
// DecodeAuthorizationMessage and DecodeDenial. It satisfies instance.Denials.
type Explainer struct {
	sts STSAPI
}

// NewExplainer returns an explainer decoding through stsAPI.
func NewExplainer(stsAPI STSAPI) *Explainer { return &Explainer{sts: stsAPI} }

// encodedPrefix precedes the encoded message in EC2's UnauthorizedOperation message.
const encodedPrefix = "Encoded authorization failure message: "

// Explain returns reason UnauthorizedOperation and a message: the denial decoded (what was
// refused to whom on what, and the fix) when the error carries an encoded message that STS
// decodes, else EC2's own message with why it could not be decoded.
func (x *Explainer) Explain(ctx context.Context, err error) (string, string) {
	const reason = "UnauthorizedOperation"
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return reason, err.Error()
	}
	_, encoded, ok := strings.Cut(ae.ErrorMessage(), encodedPrefix)
	if !ok {
		return reason, ae.ErrorMessage()
	}
	encoded = strings.TrimSpace(encoded)
	out, derr := x.sts.DecodeAuthorizationMessage(ctx, &sts.DecodeAuthorizationMessageInput{EncodedMessage: aws.String(encoded)})
	if derr != nil {
		return reason, fmt.Sprintf("%s (decoding it failed: %v; allow sts:DecodeAuthorizationMessage for a precise message)", ae.ErrorMessage(), derr)
	}
	denial, derr := DecodeDenial(aws.ToString(out.DecodedMessage))
	if derr != nil {
		return reason, fmt.Sprintf("%s (%v)", ae.ErrorMessage(), derr)
	}
	return reason, denial.Message() + ". Fix: " + denial.Fix()
}
