package ami

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/network"
)

// SSMAPI is the SSM call Resolve makes; *ssm.Client satisfies it. Resolve reads one parameter per
// call (ssm:GetParameter), not GetParameters in batches, because that is the action Karpenter's
// controller policy grants: a role set up for Karpenter resolves aliases unchanged.
type SSMAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// EC2API is the EC2 call Resolve makes; *ec2.Client satisfies it.
type EC2API interface {
	DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, opts ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

// Resolve returns the candidate images of the selector terms, for Select to reduce: for an alias,
// the image of every parameter AliasParameters lists that SSM has (a family that publishes no
// neuron image simply has none), with that parameter's requirements; for an ssmParameter term,
// the image it holds; for id, name, owner and tags terms, the images DescribeImages finds (owner
// defaulting to self and amazon when a term names neither an id nor an owner). Images of other
// terms require only their architecture; images of architectures Joiner does not launch are
// dropped. An image is deprecated when its deprecation time is not after now.
func Resolve(ctx context.Context, ssmAPI SSMAPI, ec2API EC2API, terms []awsv1.AMISelectorTerm, k8sVersion string, now time.Time) ([]Image, error) {
	var out []Image
	for i, term := range terms {
		var (
			images []Image
			err    error
		)
		switch {
		case term.Alias != "":
			images, err = resolveAlias(ctx, ssmAPI, ec2API, term.Alias, k8sVersion, now)
		case term.SSMParameter != "":
			images, err = resolveParameter(ctx, ssmAPI, ec2API, term.SSMParameter, now)
		default:
			images, err = describe(ctx, ec2API, TermInput(term), now, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("resolving spec.amiSelectorTerms[%d], %w", i, err)
		}
		out = append(out, images...)
	}
	return out, nil
}

// TermInput is the DescribeImages request of a term that is not an alias: its id, tags and name as
// filters, its owner, or the account's own and Amazon's images when it names neither owner nor
// id. World capture reads the images a class selects with it, as the controller does.
func TermInput(term awsv1.AMISelectorTerm) *ec2.DescribeImagesInput {
	filters := network.Filters("image-id", term.ID, term.Tags)
	if term.Name != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("name"), Values: []string{term.Name}})
	}
	in := &ec2.DescribeImagesInput{Filters: filters, IncludeDeprecated: aws.Bool(true)}
	switch {
	case term.Owner != "":
		in.Owners = []string{term.Owner}
	case term.ID == "":
		in.Owners = []string{"self", "amazon"}
	}
	return in
}

func resolveAlias(ctx context.Context, ssmAPI SSMAPI, ec2API EC2API, alias, k8sVersion string, now time.Time) ([]Image, error) {
	params, err := AliasParameters(alias, k8sVersion)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(params))
	for _, p := range params {
		names = append(names, p.Name)
	}
	values, err := getParameters(ctx, ssmAPI, names)
	if err != nil {
		return nil, err
	}
	reqsByID := map[string][]corev1.NodeSelectorRequirement{}
	var ids []string
	for _, p := range params {
		if id, ok := values[p.Name]; ok {
			reqsByID[id] = p.Requirements
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return describe(ctx, ec2API, &ec2.DescribeImagesInput{ImageIds: ids, IncludeDeprecated: aws.Bool(true)}, now, reqsByID)
}

func resolveParameter(ctx context.Context, ssmAPI SSMAPI, ec2API EC2API, name string, now time.Time) ([]Image, error) {
	values, err := getParameters(ctx, ssmAPI, []string{name})
	if err != nil {
		return nil, err
	}
	id, ok := values[name]
	if !ok {
		return nil, nil
	}
	return describe(ctx, ec2API, &ec2.DescribeImagesInput{ImageIds: []string{id}, IncludeDeprecated: aws.Bool(true)}, now, nil)
}

// getParameters returns the values of the parameters that exist, by name; a parameter SSM does not
// have (ParameterNotFound: a family that publishes no image of a variant) is left out.
func getParameters(ctx context.Context, api SSMAPI, names []string) (map[string]string, error) {
	values := map[string]string{}
	for _, name := range names {
		out, err := api.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		if notFound := (*ssmtypes.ParameterNotFound)(nil); errors.As(err, &notFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("getting SSM parameter %s, %w", name, err)
		}
		if out.Parameter != nil {
			values[name] = aws.ToString(out.Parameter.Value)
		}
	}
	return values, nil
}

// describe lists the images of a DescribeImages request; reqsByID gives the requirements of
// images resolved from alias parameters, others require their architecture.
func describe(ctx context.Context, api EC2API, in *ec2.DescribeImagesInput, now time.Time, reqsByID map[string][]corev1.NodeSelectorRequirement) ([]Image, error) {
	var out []Image
	pages := ec2.NewDescribeImagesPaginator(api, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing images, %w", err)
		}
		for _, img := range page.Images {
			arch := architecture(img.Architecture)
			if arch == "" {
				continue
			}
			created, _ := time.Parse(time.RFC3339, aws.ToString(img.CreationDate))
			image := Image{ID: aws.ToString(img.ImageId), Name: aws.ToString(img.Name), CreationDate: created, Architecture: arch}
			if d := aws.ToString(img.DeprecationTime); d != "" {
				if at, err := time.Parse(time.RFC3339, d); err == nil && !at.After(now) {
					image.Deprecated = true
				}
			}
			image.Requirements = reqsByID[image.ID]
			if image.Requirements == nil {
				image.Requirements = []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
			}
			out = append(out, image)
		}
	}
	return out, nil
}

func architecture(a ec2types.ArchitectureValues) string {
	switch a {
	case ec2types.ArchitectureValuesX8664:
		return v1.ArchitectureAmd64
	case ec2types.ArchitectureValuesArm64:
		return v1.ArchitectureArm64
	}
	return ""
}
