package provider

import (
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/launchtemplate"
	"github.com/joinerhq/joiner/pkg/aws/nodeclass"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/aws/validation"
)

// Options are the operator's settings of the AWS provider.
type Options struct {
	// Cluster is what nodes need to join; Cluster.Name also names the cluster's AWS resources.
	Cluster userdata.Cluster
	// Region is the cluster's AWS region.
	Region string
	// KubernetesVersion (major.minor) picks the AMIs of aliases.
	KubernetesVersion string
	// VMMemoryOverheadPercent, 0 for instancetype.DefaultVMMemoryOverheadPercent.
	VMMemoryOverheadPercent float64
}

// AWS is the AWS provider wired from one set of SDK clients: the CloudProvider and the parts
// the controllers call directly.
type AWS struct {
	CloudProvider *CloudProvider
	// NodeClasses resolves EC2NodeClass status, validation included.
	NodeClasses *nodeclass.Resolver
	// InstanceProfiles deletes a node class's instance profile when the class goes.
	InstanceProfiles *instanceprofile.Provider
	// LaunchTemplates garbage-collects unused launch templates.
	LaunchTemplates *launchtemplate.Provider
	// Instances lists leaked instances for garbage collection.
	Instances *instance.Provider
	// Prices are refreshed by GetInstanceTypes, or by a controller on a timer.
	Prices *pricing.Provider
	// Unavailable is the unavailable-offerings cache launches and spot interruptions feed.
	Unavailable *instancetype.UnavailableOfferings
	// SQS reads the interruption queue.
	SQS *sqs.Client
}

// Build wires the AWS provider over the SDK clients. kube reads EC2NodeClasses.
func Build(kube client.Reader, clients *sdk.Clients, o Options, clk clock.PassiveClock) *AWS {
	unavailable := instancetype.NewUnavailableOfferings(clk)
	prices := pricing.NewProvider(clients.Pricing, clients.EC2, o.Region, clk)
	instanceTypes := instancetype.NewProvider(clients.EC2, prices, unavailable, clk, o.VMMemoryOverheadPercent)
	launchTemplates := launchtemplate.NewProvider(clients.EC2, o.Cluster.Name, clk)
	profiles := instanceprofile.NewProvider(clients.IAM, o.Cluster.Name, o.Region)
	instances := instance.NewProvider(clients.EC2, unavailable, validation.NewExplainer(clients.STS), o.Cluster.Name, clk).WithRoleReader(profiles).
		WithNamedInstances(NamedInstances(kube))
	validator := validation.NewValidator(clients.EC2, clients.STS, instanceTypes, o.Cluster)
	return &AWS{
		CloudProvider: New(Config{
			Kube: kube, Cluster: o.Cluster, Region: o.Region, InstanceTypes: instanceTypes, Prices: prices,
			LaunchTemplates: launchTemplates, Instances: instances,
		}),
		NodeClasses: nodeclass.NewResolver(clients.EC2, clients.SSM, profiles, validator, o.KubernetesVersion, clk).
			WithJoinChecker(nodeclass.NewJoinChecker(clients.EKS, clients.IAM, clients.STS, kube, instanceTypes, o.Cluster)),
		InstanceProfiles: profiles,
		LaunchTemplates:  launchTemplates,
		Instances:        instances,
		Prices:           prices,
		Unavailable:      unavailable,
		SQS:              clients.SQS,
	}
}
