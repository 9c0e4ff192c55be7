package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/drift"
	"github.com/joinerhq/joiner/pkg/aws/instance"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/launchtemplate"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Name is the provider's name.
const Name = "aws"

// Prices refreshes the region's prices when due (pricing.Provider).
type Prices interface {
	Refresh(ctx context.Context) error
}

// Config is what the provider is built from.
type Config struct {
	// Kube reads EC2NodeClasses.
	Kube client.Reader
	// Cluster is what nodes need to join (name, endpoint, CA, DNS).
	Cluster userdata.Cluster
	// Region is the cluster's AWS region, for the topology.kubernetes.io/region label.
	Region          string
	InstanceTypes   *instancetype.Provider
	Prices          Prices
	LaunchTemplates *launchtemplate.Provider
	Instances       *instance.Provider
}

// CloudProvider is the AWS cloudprovider.CloudProvider.
type CloudProvider struct {
	cfg Config
}

var _ cloudprovider.CloudProvider = (*CloudProvider)(nil)

// New returns the AWS cloud provider.
func New(cfg Config) *CloudProvider { return &CloudProvider{cfg: cfg} }

// Name is "aws".
func (c *CloudProvider) Name() string { return Name }

// GetSupportedNodeClasses returns EC2NodeClass.
func (c *CloudProvider) GetSupportedNodeClasses() []client.Object {
	return []client.Object{&awsv1.EC2NodeClass{TypeMeta: metav1.TypeMeta{APIVersion: awsv1.SchemeGroupVersion.String(), Kind: "EC2NodeClass"}}}
}

// readyNodeClass returns the named EC2NodeClass when it is Ready.
func (c *CloudProvider) readyNodeClass(ctx context.Context, ref *v1.NodeClassReference) (*awsv1.EC2NodeClass, error) {
	if ref == nil {
		return nil, cloudprovider.NewNodeClassNotReadyError(errors.New("no nodeClassRef"))
	}
	nodeClass := &awsv1.EC2NodeClass{}
	if err := c.cfg.Kube.Get(ctx, types.NamespacedName{Name: ref.Name}, nodeClass); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("EC2NodeClass %s not found", ref.Name))
		}
		return nil, fmt.Errorf("getting EC2NodeClass %s, %w", ref.Name, err)
	}
	if !meta.IsStatusConditionTrue(nodeClass.Status.Conditions, awsv1.ConditionTypeReady) {
		msg := "not Ready"
		if cond := meta.FindStatusCondition(nodeClass.Status.Conditions, awsv1.ConditionTypeReady); cond != nil {
			msg = fmt.Sprintf("not Ready: %s", cond.Message)
		}
		return nil, cloudprovider.NewNodeClassNotReadyError(fmt.Errorf("EC2NodeClass %s %s", ref.Name, msg))
	}
	return nodeClass, nil
}

// GetInstanceTypes refreshes prices when due (a failure keeps the previous ones) and lists the
// node class's instance types.
func (c *CloudProvider) GetInstanceTypes(ctx context.Context, nodePool *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	nodeClass, err := c.readyNodeClass(ctx, nodePool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	if err := c.cfg.Prices.Refresh(ctx); err != nil {
		log.FromContext(ctx).Error(err, "refreshing prices; keeping the previous ones")
	}
	return c.cfg.InstanceTypes.List(ctx, nodeClass)
}

// NodeCost is what the EBS volumes of the NodePool's node class (its blockDeviceMappings, or its
// AMI family's defaults) cost per hour, at pricing.VolumesHourly's list prices.
func (c *CloudProvider) NodeCost(ctx context.Context, nodePool *v1.NodePool) (float64, error) {
	nodeClass, err := c.readyNodeClass(ctx, nodePool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return 0, err
	}
	cost, err := pricing.VolumesHourly(launchtemplate.BlockDeviceMappings(nodeClass))
	if err != nil {
		return 0, fmt.Errorf("pricing the volumes of EC2NodeClass %s, %w", nodeClass.Name, err)
	}
	return cost, nil
}

// Create launches the NodeClaim's instance, or returns the one already launched or adopted for
// it: see cloudprovider.CloudProvider and instance.Provider.Create. Launches of NodeClaims alike
// (same NodePool, node class, instance types and capacity type) go out as one CreateFleet, tagged
// with what they share (instance.CommonTags); each instance gets its NodeClaim's own tags later
// (IsDrifted, once the node's name is known). So the NodeClaim's tag cannot protect a launch
// from being repeated: instance.Provider's ledger does, within a controller, and across a
// restart a launch adopts an untagged instance that no NodeClaim names and that it fits, launched
// less than instance.AdoptionMaxAge ago, before launching (docs/design/aws-provider.md). The node
// class must be Ready to adopt as to launch.
func (c *CloudProvider) Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	nodeClass, err := c.readyNodeClass(ctx, nodeClaim.Spec.NodeClassRef)
	if err != nil {
		return nil, err
	}
	all, err := c.cfg.InstanceTypes.List(ctx, nodeClass)
	if err != nil {
		return nil, fmt.Errorf("launching nodeclaim, %w", err)
	}
	if existing := c.cfg.Instances.Launched(string(nodeClaim.UID), nodeClaim.Name); existing != nil {
		log.FromContext(ctx).Info("Returning the instance already launched for the nodeclaim", "instance", existing.ID, "state", existing.State)
		return c.launched(nodeClaim, nodeClass, existing, all), nil
	}
	var its []*cloudprovider.InstanceType
	for _, it := range all {
		if n := narrow(it, nodeClaim.Spec.Requirements, nodeClaim.Spec.Resources.Requests); n != nil {
			its = append(its, n)
		}
	}
	capacityType := instance.CapacityType(allowedCapacityTypes(nodeClaim.Spec.Requirements), its)
	if capacityType == "" {
		return nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, no available offering meets the requirements of %s", nodeClaim.Name))
	}
	inst, images, err := c.launch(ctx, nodeClass, nodeClaim, its, capacityType)
	if err != nil {
		return nil, err
	}
	if inst.ImageID == "" {
		inst.ImageID = images[inst.Type]
	}
	return c.launched(nodeClaim, nodeClass, inst, its), nil
}

// launched is what Create returns for the NodeClaim's instance, launched or adopted: a copy of
// the NodeClaim filled by nodeClaimOf from the instance and its type among its, annotated with
// the node class's hash.
func (c *CloudProvider) launched(nodeClaim *v1.NodeClaim, nodeClass *awsv1.EC2NodeClass, inst *instance.Instance, its []*cloudprovider.InstanceType) *v1.NodeClaim {
	var launched *cloudprovider.InstanceType
	for _, it := range its {
		if it.Name == inst.Type {
			launched = it
		}
	}
	out := c.nodeClaimOf(nodeClaim.DeepCopy(), inst, launched)
	hash, err := drift.NodeClassHash(nodeClass)
	if err == nil {
		out.Annotations[awsv1.AnnotationEC2NodeClassHash] = hash
		out.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] = drift.HashVersion
	}
	return out
}

// launch ensures the launch templates and creates the fleet. A launch template EC2 no longer has
// (deleted behind Joiner's back) is forgotten and the launch tried once more, which creates it
// again.
func (c *CloudProvider) launch(ctx context.Context, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim, its []*cloudprovider.InstanceType, capacityType string) (*instance.Instance, map[string]string, error) {
	for attempt := 0; ; attempt++ {
		overrides, images, err := c.overrides(ctx, nodeClass, nodeClaim, its, capacityType)
		if err != nil {
			return nil, nil, err
		}
		inst, err := c.cfg.Instances.Create(ctx, instance.Launch{CapacityType: capacityType, Overrides: overrides,
			Tags:      instance.CommonTags(c.cfg.Cluster.Name, nodeClass, nodeClaim.Labels[v1.NodePoolLabelKey]),
			NodeClaim: nodeClaim.Name, NodeClaimUID: string(nodeClaim.UID), ImageIDs: images, SecurityGroupIDs: securityGroupIDs(nodeClass)})
		if ce := cloudprovider.AsCreateError(err); ce != nil && ce.ConditionReason == instance.ReasonLaunchTemplateNotFound && attempt == 0 {
			for _, o := range overrides {
				c.cfg.LaunchTemplates.Forget(o.LaunchTemplate)
			}
			continue
		}
		return inst, images, err
	}
}

// securityGroupIDs are the security groups the node class's launch templates give instances.
func securityGroupIDs(nodeClass *awsv1.EC2NodeClass) []string {
	out := make([]string, 0, len(nodeClass.Status.SecurityGroups))
	for _, g := range nodeClass.Status.SecurityGroups {
		out = append(out, g.ID)
	}
	return out
}

// overrides chooses, per instance type, the newest AMI whose requirements it meets, ensures one
// launch template per AMI and builds the fleet overrides (each with its own AMI's template, so
// never an AMI of another architecture), cheapest first, at most instance.MaxOverrides. It also
// returns the image of each instance type.
func (c *CloudProvider) overrides(ctx context.Context, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim, its []*cloudprovider.InstanceType, capacityType string) ([]instance.Override, map[string]string, error) {
	byImage := map[string][]*cloudprovider.InstanceType{}
	images := map[string]string{}
	for _, it := range its {
		for _, a := range nodeClass.Status.AMIs {
			if satisfies(it, a.Requirements) {
				byImage[a.ID] = append(byImage[a.ID], it)
				images[it.Name] = a.ID
				break
			}
		}
	}
	if len(byImage) == 0 {
		return nil, nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, no AMI of EC2NodeClass %s fits any instance type the NodeClaim allows", nodeClass.Name))
	}
	rendered, err := userdata.Render(userdata.NewOptions(c.cfg.Cluster, nodeClass, nodeClaim, nil))
	if err != nil {
		return nil, nil, cloudprovider.NewCreateError(fmt.Errorf("launching nodeclaim, %w", err), "UserDataInvalid", err.Error())
	}
	if problems := rendered.Problems(); len(problems) > 0 {
		// The node would not register as required (the karpenter.sh/unregistered taint): launching
		// it would only leak an instance until the registration timeout.
		p := problems[0]
		return nil, nil, cloudprovider.NewCreateError(fmt.Errorf("launching nodeclaim, userData of EC2NodeClass %s: %s", nodeClass.Name, p.Message),
			p.Reason, p.Message+" Fix: "+p.Fix)
	}
	var subnets []instance.Subnet
	for _, s := range nodeClass.Status.Subnets {
		subnets = append(subnets, instance.Subnet{ID: s.ID, Zone: s.Zone})
	}
	var out []instance.Override
	for _, imageID := range slices.Sorted(maps.Keys(byImage)) {
		group := byImage[imageID]
		arch := group[0].Requirements[corev1.LabelArchStable][0]
		name, err := c.cfg.LaunchTemplates.Ensure(ctx, launchtemplate.NewOptions(c.cfg.Cluster.Name, nodeClass, nodeClaim.Labels[v1.NodePoolLabelKey], capacityType, imageID, rendered.UserData))
		if err != nil {
			return nil, nil, fmt.Errorf("launching nodeclaim, %w", err)
		}
		ov, err := instance.Overrides(group, capacityType, subnets, map[string]string{arch: name})
		if err != nil && !cloudprovider.IsInsufficientCapacityError(err) {
			return nil, nil, err
		}
		out = append(out, ov...)
	}
	if len(out) == 0 {
		return nil, nil, cloudprovider.NewInsufficientCapacityError(fmt.Errorf("launching nodeclaim, no available %s offering in the zones of EC2NodeClass %s's subnets", capacityType, nodeClass.Name))
	}
	slices.SortStableFunc(out, func(a, b instance.Override) int {
		if a.Price != b.Price {
			if a.Price < b.Price {
				return -1
			}
			return 1
		}
		return strings.Compare(a.InstanceType+a.Zone, b.InstanceType+b.Zone)
	})
	if len(out) > instance.MaxOverrides {
		out = out[:instance.MaxOverrides]
	}
	return out, images, nil
}

// nodeClaimOf fills a NodeClaim from a launched or described instance: providerID, imageID,
// labels of the instance type (single-valued requirements), zone, zone ID, region, capacity
// type, NodePool and EC2NodeClass, and capacity and allocatable when the instance type is known.
func (c *CloudProvider) nodeClaimOf(nc *v1.NodeClaim, inst *instance.Instance, it *cloudprovider.InstanceType) *v1.NodeClaim {
	if nc.Labels == nil {
		nc.Labels = map[string]string{}
	}
	if nc.Annotations == nil {
		nc.Annotations = map[string]string{}
	}
	if it != nil {
		for k, vs := range it.Requirements {
			if len(vs) == 1 {
				nc.Labels[k] = vs[0]
			}
		}
		nc.Status.Capacity = it.Capacity.DeepCopy()
		nc.Status.Allocatable = it.Allocatable()
	}
	nc.Labels[corev1.LabelInstanceTypeStable] = inst.Type
	nc.Labels[corev1.LabelTopologyZone] = inst.Zone
	nc.Labels[corev1.LabelTopologyRegion] = c.cfg.Region
	nc.Labels[v1.CapacityTypeLabelKey] = inst.CapacityType
	if id := zoneID(inst, it); id != "" {
		nc.Labels[awsv1.LabelTopologyZoneID] = id
	}
	if pool := inst.Tags[awsv1.TagKeyNodePool]; pool != "" {
		nc.Labels[v1.NodePoolLabelKey] = pool
	}
	if ref := nc.Spec.NodeClassRef; ref != nil {
		nc.Labels[v1.NodeClassLabelKey(ref)] = ref.Name
	}
	nc.Status.ProviderID = inst.ProviderID()
	nc.Status.ImageID = inst.ImageID
	return nc
}

// zoneID is the ID of the instance's zone: as EC2 described it, else that of the instance type's
// offering in the zone (a launch's answer names the zone only), else "".
func zoneID(inst *instance.Instance, it *cloudprovider.InstanceType) string {
	if inst.ZoneID != "" {
		return inst.ZoneID
	}
	if it == nil {
		return ""
	}
	for _, o := range it.Offerings {
		if o.Zone == inst.Zone && o.ZoneID != "" {
			return o.ZoneID
		}
	}
	return ""
}

// DescribedMaxAge is how old a description of an instance Get and IsDrifted may answer from
// (instance.Provider.Recent): twice the interval at which the leaked-instance collector lists
// every instance of the cluster, so that its listing serves them. Both were called for every
// NodeClaim at each of its changes, one DescribeInstances each: 14 a second in the 1,000-pod
// consolidation run, where EC2 throttles its Describe calls at about 20 a second for the whole
// account. What they compare (an instance's image, subnet and security groups, its existence)
// changes rarely, and a NodeClaimNotFoundError is always current.
const DescribedMaxAge = 2 * time.Minute

// Get describes the instance with the provider ID, as it was at most DescribedMaxAge ago; a
// NodeClaimNotFoundError is EC2's current answer.
func (c *CloudProvider) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	id := instance.InstanceID(providerID)
	if id == "" {
		return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("%q is not an AWS provider ID", providerID))
	}
	inst, err := c.cfg.Instances.Recent(ctx, id, DescribedMaxAge)
	if err != nil {
		return nil, err
	}
	return c.describedNodeClaim(ctx, inst, map[string][]*cloudprovider.InstanceType{}), nil
}

// List describes every instance Joiner launched for the cluster.
func (c *CloudProvider) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	insts, err := c.cfg.Instances.List(ctx)
	if err != nil {
		return nil, err
	}
	byClass := map[string][]*cloudprovider.InstanceType{}
	out := make([]*v1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, c.describedNodeClaim(ctx, inst, byClass))
	}
	return out, nil
}

// describedNodeClaim is a NodeClaim named after the instance's nodeclaim tag, labelled from the
// instance and its type's description, with capacity and allocatable when the instance's node
// class (its karpenter.k8s.aws/ec2nodeclass tag) still exists. byClass memoizes the instance
// types of each class within one call.
func (c *CloudProvider) describedNodeClaim(ctx context.Context, inst *instance.Instance, byClass map[string][]*cloudprovider.InstanceType) *v1.NodeClaim {
	nc := &v1.NodeClaim{}
	nc.Name = inst.Tags[awsv1.TagKeyNodeClaim]
	nc.Labels = map[string]string{}
	if d, ok, err := c.cfg.InstanceTypes.Get(ctx, inst.Type); err == nil && ok {
		for k, vs := range instancetype.Requirements(d.Info, nil) {
			if len(vs) == 1 {
				nc.Labels[k] = vs[0]
			}
		}
		maps.Copy(nc.Labels, d.Labels)
	}
	var launched *cloudprovider.InstanceType
	if name := inst.Tags[awsv1.TagKeyNodeClass]; name != "" {
		nc.Spec.NodeClassRef = &v1.NodeClassReference{Group: awsv1.Group, Kind: "EC2NodeClass", Name: name}
		its, ok := byClass[name]
		if !ok {
			its = c.classInstanceTypes(ctx, name)
			byClass[name] = its
		}
		for _, it := range its {
			if it.Name == inst.Type {
				launched = it
			}
		}
	}
	out := c.nodeClaimOf(nc, inst, launched)
	// Offerings' zones and capacity types are not the instance's: take them from the instance.
	out.Labels[corev1.LabelTopologyZone] = inst.Zone
	out.Labels[v1.CapacityTypeLabelKey] = inst.CapacityType
	return out
}

// classInstanceTypes lists the instance types of a node class, or nil when it cannot.
func (c *CloudProvider) classInstanceTypes(ctx context.Context, name string) []*cloudprovider.InstanceType {
	nodeClass := &awsv1.EC2NodeClass{}
	if err := c.cfg.Kube.Get(ctx, types.NamespacedName{Name: name}, nodeClass); err != nil {
		return nil
	}
	its, err := c.cfg.InstanceTypes.List(ctx, nodeClass)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing instance types for a described instance", "ec2nodeclass", name)
		return nil
	}
	return its
}

// Delete terminates the NodeClaim's instance.
func (c *CloudProvider) Delete(ctx context.Context, nodeClaim *v1.NodeClaim) error {
	id := instance.InstanceID(nodeClaim.Status.ProviderID)
	if id == "" {
		return cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("nodeclaim %s has no AWS provider ID", nodeClaim.Name))
	}
	return c.cfg.Instances.Delete(ctx, id)
}

// IsDrifted compares the instance, as described at most DescribedMaxAge ago, with its node
// class (drift.Reason). It also gives the instance of a registered NodeClaim its own tags (tag).
func (c *CloudProvider) IsDrifted(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	id := instance.InstanceID(nodeClaim.Status.ProviderID)
	if id == "" {
		return "", cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("nodeclaim %s has no AWS provider ID", nodeClaim.Name))
	}
	if nodeClaim.Spec.NodeClassRef == nil {
		return "", nil
	}
	nodeClass := &awsv1.EC2NodeClass{}
	if err := c.cfg.Kube.Get(ctx, types.NamespacedName{Name: nodeClaim.Spec.NodeClassRef.Name}, nodeClass); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	inst, err := c.cfg.Instances.Recent(ctx, id, DescribedMaxAge)
	if err != nil {
		return "", err
	}
	c.tag(ctx, nodeClass, nodeClaim, inst)
	return drift.Reason(nodeClass, nodeClaim, drift.Instance{ImageID: inst.ImageID, SubnetID: inst.SubnetID, SecurityGroupIDs: inst.SecurityGroupIDs}), nil
}

// tag gives a registered NodeClaim's instance its own tags (instance.NodeClaimTags: the
// NodeClaim's name, and Name = the node's name), as upstream Karpenter's tagging controller does
// once the node is known: the batched launch could not carry them. The drift check of every
// NodeClaim runs on a timer, so it is where a tag the pace (instance.TaggingRate) skipped or a
// failed call is tried again; a failure is logged, never a drift error.
func (c *CloudProvider) tag(ctx context.Context, nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim, inst *instance.Instance) {
	if nodeClaim.Status.NodeName == "" || nodeClaim.DeletionTimestamp != nil {
		return
	}
	if _, err := c.cfg.Instances.Tag(ctx, inst, instance.NodeClaimTags(nodeClass, nodeClaim.Name, nodeClaim.Status.NodeName)); err != nil {
		log.FromContext(ctx).Error(err, "tagging the instance of the nodeclaim; trying again at its next drift check", "instance", inst.ID)
	}
}

// NamedInstances lists the providerIDs of every NodeClaim (instance.Provider.WithNamedInstances).
func NamedInstances(kube client.Reader) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		var list v1.NodeClaimList
		if err := kube.List(ctx, &list); err != nil {
			return nil, fmt.Errorf("listing nodeclaims, %w", err)
		}
		out := make([]string, 0, len(list.Items))
		for _, nc := range list.Items {
			if nc.Status.ProviderID != "" {
				out = append(out, nc.Status.ProviderID)
			}
		}
		return out, nil
	}
}

var _ cloudprovider.JoinDiagnoser = (*CloudProvider)(nil)

// DiagnoseJoin says why the NodeClaim's instance has not registered its Node, from the instance's
// state and console output (instance.Provider.Diagnose).
func (c *CloudProvider) DiagnoseJoin(ctx context.Context, nodeClaim *v1.NodeClaim) (cloudprovider.Diagnosis, error) {
	id := instance.InstanceID(nodeClaim.Status.ProviderID)
	if id == "" {
		return cloudprovider.Diagnosis{}, fmt.Errorf("diagnosing nodeclaim %s, %q is not an AWS provider ID", nodeClaim.Name, nodeClaim.Status.ProviderID)
	}
	d, err := c.cfg.Instances.Diagnose(ctx, id)
	if err != nil {
		return cloudprovider.Diagnosis{}, fmt.Errorf("diagnosing nodeclaim %s, %w", nodeClaim.Name, err)
	}
	return d, nil
}
