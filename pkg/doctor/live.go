package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/nodeclass"
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// EKSAPI and IAMAPI are the calls live doctor makes to read a class's join inputs: the same as
// the controller's join check (nodeclass.JoinChecker), so doctor sees what the controller sees.
type (
	EKSAPI = nodeclass.EKSAPI
	IAMAPI = nodeclass.IAMAPI
)

// EC2API is the EC2 call live doctor makes; *ec2.Client satisfies it.
type EC2API interface {
	DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, opts ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
}

// AWS are the clients of live doctor.
type AWS struct {
	EKS EKSAPI
	IAM IAMAPI
	EC2 EC2API
	// InstanceTypes lists the instance types a class may launch (instancetype.Provider.List), so
	// that the architecture checks know which architectures each NodePool's requirements allow.
	// Nil leaves them to the NodePools' kubernetes.io/arch requirements.
	InstanceTypes func(ctx context.Context, nodeClass *awsv1.EC2NodeClass) ([]*cloudprovider.InstanceType, error)
}

// NewAWS builds live doctor's clients from one SDK configuration (sdk.LoadConfig). Instance types
// are read as the controller reads them; prices are not needed and never refreshed.
func NewAWS(cfg awssdk.Config, clk clock.PassiveClock) AWS {
	clients := sdk.NewClients(cfg)
	types := instancetype.NewProvider(clients.EC2, pricing.NewProvider(clients.Pricing, clients.EC2, cfg.Region, clk), instancetype.NewUnavailableOfferings(clk), clk, 0)
	return AWS{EKS: eks.NewFromConfig(cfg), IAM: clients.IAM, EC2: clients.EC2, InstanceTypes: types.List}
}

var (
	_ EKSAPI = (*eks.Client)(nil)
	_ IAMAPI = (*iam.Client)(nil)
	_ EC2API = (*ec2.Client)(nil)
)

// Reasons of what live reading finds.
const (
	ReasonNotVisible                 = "NotVisible"
	ReasonNodeRoleNotFound           = "NodeRoleNotFound"
	ReasonInstanceProfileNotFound    = "InstanceProfileNotFound"
	ReasonInstanceProfileNoRole      = "InstanceProfileHasNoRole"
	ReasonAMINotFound                = "AMINotFound"
	ReasonInstanceProfileRoleDiffers = "InstanceProfileRoleDiffers"
)

// ReadLive reads the cluster's NodePools, EC2NodeClasses (with their status), unscheduled pods,
// kube-system/aws-auth and the controller's ServiceAccount through kube, and from AWS the EKS
// cluster o.ClusterName (authentication mode, access entries), the node roles and instance
// profiles, and the AMIs. Only failing to list NodePools or EC2NodeClasses is an error: anything
// else it is refused becomes a Warning finding, and the checks it feeds treat it as not visible.
func ReadLive(ctx context.Context, kube client.Reader, cloud AWS, o Options) (*Observations, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.ClusterName == "" {
		return nil, errors.New("live doctor needs the EKS cluster's name: pass --cluster-name (or set CLUSTER_NAME)")
	}
	obs := &Observations{Mode: ModeLive, NodeClassesComplete: true, NodeRoleARNs: map[string]string{}}
	pools := &v1.NodePoolList{}
	if err := kube.List(ctx, pools); err != nil {
		return nil, fmt.Errorf("listing NodePools (doctor needs list on nodepools.karpenter.sh), %w", err)
	}
	classes := &awsv1.EC2NodeClassList{}
	if err := kube.List(ctx, classes); err != nil {
		return nil, fmt.Errorf("listing EC2NodeClasses (doctor needs list on ec2nodeclasses.karpenter.k8s.aws), %w", err)
	}
	for i := range pools.Items {
		obs.NodePools = append(obs.NodePools, &pools.Items[i])
	}
	for i := range classes.Items {
		obs.NodeClasses = append(obs.NodeClasses, &classes.Items[i])
	}
	readPods(ctx, kube, obs)
	readAWSAuth(ctx, kube, obs)
	readControllerRole(ctx, kube, obs)
	readCluster(ctx, cloud.EKS, o, obs)
	obs.InstanceTypes = map[string][]*cloudprovider.InstanceType{}
	for _, nc := range obs.NodeClasses {
		readNodeRole(ctx, cloud.IAM, nc, obs)
		readAMIs(ctx, cloud.EC2, nc, obs)
		if cloud.InstanceTypes != nil {
			types, err := cloud.InstanceTypes(ctx, nc)
			if err != nil {
				notVisible(obs, "EC2NodeClass/"+nc.Name, "the instance types of EC2NodeClass "+nc.Name, err, "grant ec2:DescribeInstanceTypes and ec2:DescribeInstanceTypeOfferings")
				continue
			}
			obs.InstanceTypes[nc.Name] = types
		}
	}
	readAccessEntries(ctx, cloud.EKS, o.ClusterName, obs)
	if o.AccountID != "" {
		obs.AccountID, obs.AccountSource = o.AccountID, "--account"
	}
	if o.AuthenticationMode != "" {
		obs.AuthenticationMode = o.AuthenticationMode
	}
	return obs, nil
}

func notVisible(obs *Observations, object, what string, err error, fix string) {
	obs.Findings = append(obs.Findings, Finding{Severity: nodejoin.SeverityWarning, Object: object, Reason: ReasonNotVisible,
		Message: fmt.Sprintf("doctor could not read %s, so the checks that need it say less: %v", what, err), Fix: fix})
}

func readPods(ctx context.Context, kube client.Reader, obs *Observations) {
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods); err != nil {
		notVisible(obs, "Pods", "the pods", err, "grant list on pods to see which pending pods no NodePool can take")
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending {
			obs.Pods = append(obs.Pods, p)
		}
	}
}

func readAWSAuth(ctx context.Context, kube client.Reader, obs *Observations) {
	cm := &corev1.ConfigMap{}
	err := kube.Get(ctx, types.NamespacedName{Namespace: "kube-system", Name: "aws-auth"}, cm)
	switch {
	case apierrors.IsNotFound(err):
		obs.AWSAuth = &nodejoin.AWSAuth{Found: false}
	case err != nil:
		notVisible(obs, "ConfigMap/kube-system/aws-auth", "kube-system/aws-auth", err, "grant get on configmaps in kube-system (aws-auth)")
	default:
		obs.AWSAuth = &nodejoin.AWSAuth{Found: true, MapRoles: cm.Data["mapRoles"]}
	}
}

// readControllerRole finds the controller's role in the IRSA annotation of its ServiceAccount.
func readControllerRole(ctx context.Context, kube client.Reader, obs *Observations) {
	sas := &corev1.ServiceAccountList{}
	if err := kube.List(ctx, sas); err != nil {
		return // only names the controller-role mistake more precisely
	}
	var ids []identity
	for _, sa := range sas.Items {
		if arn := sa.Annotations[IRSAAnnotation]; arn != "" {
			ids = append(ids, identity{serviceAccount: namespaced(sa.Namespace, sa.Name), roleARN: arn})
		}
	}
	if id, ok := controllerIdentity(ids); ok {
		obs.ControllerRoleARN = id.roleARN
	}
}

// readCluster reads the authentication mode, the account (from the cluster's ARN) and what nodes
// join with.
func readCluster(ctx context.Context, api EKSAPI, o Options, obs *Observations) {
	obs.Cluster = userdata.Cluster{Name: o.ClusterName}
	out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String(o.ClusterName)})
	if err != nil || out.Cluster == nil {
		notVisible(obs, "EKSCluster/"+o.ClusterName, "eks:DescribeCluster of "+o.ClusterName, err,
			"check --cluster-name and --aws-region, and grant eks:DescribeCluster; or pass --authentication-mode and --account")
		obs.Cluster = offlineCluster(o.ClusterName)
		return
	}
	c := out.Cluster
	obs.AccountID, obs.AccountSource = accountOf(awssdk.ToString(c.Arn)), "the ARN of EKS cluster "+o.ClusterName
	if c.AccessConfig != nil {
		obs.AuthenticationMode = string(c.AccessConfig.AuthenticationMode)
	} else {
		// Clusters created before access entries existed have no accessConfig: CONFIG_MAP.
		obs.AuthenticationMode = nodejoin.AuthenticationModeConfigMap
	}
	obs.Cluster.Endpoint = awssdk.ToString(c.Endpoint)
	if c.CertificateAuthority != nil {
		obs.Cluster.CABundle = awssdk.ToString(c.CertificateAuthority.Data)
	}
	if c.KubernetesNetworkConfig != nil {
		obs.Cluster.CIDR = awssdk.ToString(c.KubernetesNetworkConfig.ServiceIpv4Cidr)
	}
	fallback := offlineCluster(o.ClusterName)
	if obs.Cluster.Endpoint == "" {
		obs.Cluster.Endpoint = fallback.Endpoint
	}
	if obs.Cluster.CABundle == "" {
		obs.Cluster.CABundle = fallback.CABundle
	}
	obs.Cluster.DNS = clusterDNS(obs.Cluster.CIDR)
}

// clusterDNS is the .10 address of an IPv4 service CIDR, as on EKS; empty when it is not one.
func clusterDNS(cidr string) string {
	prefix, _, ok := strings.Cut(cidr, "/")
	parts := strings.Split(prefix, ".")
	if !ok || len(parts) != 4 {
		return ""
	}
	parts[3] = "10"
	return strings.Join(parts, ".")
}

// readAccessEntries lists the cluster's access entries and describes those of the node roles
// (the only ones whose type matters), so a cluster with many entries costs few calls.
func readAccessEntries(ctx context.Context, api EKSAPI, cluster string, obs *Observations) {
	var arns []string
	var token *string
	for {
		out, err := api.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: awssdk.String(cluster), NextToken: token})
		if err != nil {
			return // not visible: nodejoin says so in its own finding
		}
		arns = append(arns, out.AccessEntries...)
		if token = out.NextToken; token == nil {
			break
		}
	}
	nodeRoles := map[string]bool{}
	for _, nc := range obs.NodeClasses {
		if arn := obs.NodeRoleARNs[nc.Name]; arn != "" {
			nodeRoles[nodejoin.CanonicalRoleARN(arn)] = true
		} else if nc.Spec.Role != "" && obs.AccountID != "" {
			nodeRoles[fmt.Sprintf("arn:aws:iam::%s:role/%s", obs.AccountID, nc.Spec.Role)] = true
		}
	}
	var entries []nodejoin.AccessEntry
	for _, arn := range arns {
		if !nodeRoles[nodejoin.CanonicalRoleARN(arn)] {
			entries = append(entries, nodejoin.AccessEntry{PrincipalARN: arn})
			continue
		}
		out, err := api.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: awssdk.String(cluster), PrincipalArn: awssdk.String(arn)})
		if err != nil || out.AccessEntry == nil {
			return
		}
		e := out.AccessEntry
		entries = append(entries, nodejoin.AccessEntry{PrincipalARN: awssdk.ToString(e.PrincipalArn), Type: awssdk.ToString(e.Type),
			Username: awssdk.ToString(e.Username), KubernetesGroups: e.KubernetesGroups})
	}
	obs.AccessEntries, obs.AccessEntriesVisible = entries, true
}

// readNodeRole reads the node role's ARN (with its path) from IAM: spec.role's, or the role of
// spec.instanceProfile. A role or instance profile that does not exist is an Error: no instance
// can launch with it.
func readNodeRole(ctx context.Context, api IAMAPI, nc *awsv1.EC2NodeClass, obs *Observations) {
	object := "EC2NodeClass/" + nc.Name
	var nse *iamtypes.NoSuchEntityException
	if nc.Spec.Role != "" {
		out, err := api.GetRole(ctx, &iam.GetRoleInput{RoleName: awssdk.String(nc.Spec.Role)})
		switch {
		case errors.As(err, &nse):
			obs.Findings = append(obs.Findings, Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonNodeRoleNotFound,
				Message: fmt.Sprintf("EC2NodeClass %s spec.role %s does not exist in IAM: Joiner cannot create its instance profile, and nothing launches", nc.Name, nc.Spec.Role),
				Fix:     fmt.Sprintf("create the role (aws iam create-role --role-name %s --assume-role-policy-document with ec2.amazonaws.com as principal, then attach AmazonEKSWorkerNodePolicy, AmazonEKS_CNI_Policy and AmazonEC2ContainerRegistryReadOnly), or correct spec.role", nc.Spec.Role)})
		case err != nil:
			notVisible(obs, object, "IAM role "+nc.Spec.Role, err, "grant iam:GetRole on the node role")
		case out.Role != nil:
			obs.NodeRoleARNs[nc.Name] = awssdk.ToString(out.Role.Arn)
			readManagedProfile(ctx, api, nc, obs)
		}
		return
	}
	profile := ptrString(nc.Spec.InstanceProfile)
	if profile == "" {
		return
	}
	out, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: awssdk.String(profile)})
	switch {
	case errors.As(err, &nse):
		obs.Findings = append(obs.Findings, Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonInstanceProfileNotFound,
			Message: fmt.Sprintf("EC2NodeClass %s spec.instanceProfile %s does not exist in IAM: every launch fails", nc.Name, profile),
			Fix:     fmt.Sprintf("aws iam create-instance-profile --instance-profile-name %s && aws iam add-role-to-instance-profile --instance-profile-name %s --role-name <node role>; or set spec.role and let Joiner manage the instance profile", profile, profile)})
	case err != nil:
		notVisible(obs, object, "instance profile "+profile, err, "grant iam:GetInstanceProfile on the instance profile")
	case out.InstanceProfile == nil || len(out.InstanceProfile.Roles) == 0:
		obs.Findings = append(obs.Findings, Finding{Severity: nodejoin.SeverityError, Object: object, Reason: ReasonInstanceProfileNoRole,
			Message: fmt.Sprintf("instance profile %s of EC2NodeClass %s holds no role: its instances get no credentials, and their kubelets can never authenticate", profile, nc.Name),
			Fix:     fmt.Sprintf("aws iam add-role-to-instance-profile --instance-profile-name %s --role-name <node role>", profile)})
	default:
		obs.NodeRoleARNs[nc.Name] = awssdk.ToString(out.InstanceProfile.Roles[0].Arn)
	}
}

// readManagedProfile checks the instance profile Joiner manages for spec.role (status.instanceProfile):
// instances get the role it holds, so when that is not spec.role (changed out of band, or a
// role change not yet applied) the role that must be mapped is the profile's.
func readManagedProfile(ctx context.Context, api IAMAPI, nc *awsv1.EC2NodeClass, obs *Observations) {
	profile := nc.Status.InstanceProfile
	if profile == "" {
		return
	}
	out, err := api.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: awssdk.String(profile)})
	if err != nil || out.InstanceProfile == nil || len(out.InstanceProfile.Roles) == 0 {
		return // the controller recreates or repairs its own profile
	}
	role := out.InstanceProfile.Roles[0]
	if awssdk.ToString(role.RoleName) == nc.Spec.Role {
		return
	}
	obs.NodeRoleARNs[nc.Name] = awssdk.ToString(role.Arn)
	obs.Findings = append(obs.Findings, Finding{Severity: nodejoin.SeverityWarning, Object: "EC2NodeClass/" + nc.Name, Reason: ReasonInstanceProfileRoleDiffers,
		Message: fmt.Sprintf("EC2NodeClass %s names role %s, but its instance profile %s holds %s: instances launched now get %s, and that is the role checked against aws-auth and the access entries",
			nc.Name, nc.Spec.Role, profile, awssdk.ToString(role.RoleName), awssdk.ToString(role.RoleName)),
		Fix: fmt.Sprintf("wait for Joiner to update the instance profile (it does on the class's next resolution), or run aws iam remove-role-from-instance-profile --instance-profile-name %s --role-name %s && aws iam add-role-to-instance-profile --instance-profile-name %s --role-name %s",
			profile, awssdk.ToString(role.RoleName), profile, nc.Spec.Role)})
}

// readAMIs looks up the class's resolved AMIs and the AMIs its terms select by id. An id term EC2
// does not know (deleted, not shared with the account, another region) is an Error when no AMI
// resolved at all, else a Warning. A class whose status holds no AMIs gets the architectures of
// the id terms' AMIs, so that the architecture checks run before the controller resolves it.
func readAMIs(ctx context.Context, api EC2API, nc *awsv1.EC2NodeClass, obs *Observations) {
	var ids []string
	for _, a := range nc.Status.AMIs {
		ids = append(ids, a.ID)
	}
	var termIDs []string
	for _, t := range nc.Spec.AMISelectorTerms {
		if t.ID != "" {
			termIDs = append(termIDs, t.ID)
			if !slices.Contains(ids, t.ID) {
				ids = append(ids, t.ID)
			}
		}
	}
	if len(ids) == 0 {
		return
	}
	object := "EC2NodeClass/" + nc.Name
	found := map[string]ec2types.Image{}
	in := &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: awssdk.String("image-id"), Values: ids}}}
	for {
		out, err := api.DescribeImages(ctx, in)
		if err != nil {
			notVisible(obs, object, "the AMIs "+strings.Join(ids, ", "), err, "grant ec2:DescribeImages")
			return
		}
		for _, img := range out.Images {
			found[awssdk.ToString(img.ImageId)] = img
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	var missing []string
	for _, id := range termIDs {
		if _, ok := found[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sev := nodejoin.SeverityWarning
		if len(missing) == len(termIDs) && len(nc.Status.AMIs) == 0 {
			sev = nodejoin.SeverityError
		}
		obs.Findings = append(obs.Findings, Finding{Severity: sev, Object: object, Reason: ReasonAMINotFound,
			Message: fmt.Sprintf("EC2NodeClass %s selects AMI %s, which EC2 does not return to this account in this region (deleted, deregistered, not shared, or in another region)", nc.Name, strings.Join(missing, ", ")),
			Fix:     fmt.Sprintf("correct spec.amiSelectorTerms of EC2NodeClass %s, or share the AMI with the cluster's account (aws ec2 modify-image-attribute --image-id %s --launch-permission \"Add=[{UserId=<account>}]\")", nc.Name, missing[0])})
	}
	if len(nc.Status.AMIs) > 0 {
		return
	}
	for _, id := range termIDs {
		img, ok := found[id]
		if !ok {
			continue
		}
		ami := awsv1.AMI{ID: id, Name: awssdk.ToString(img.Name)}
		if arch := archOf(img.Architecture); arch != "" {
			ami.Requirements = []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
		}
		nc.Status.AMIs = append(nc.Status.AMIs, ami)
	}
}

// archOf maps EC2's architecture names to Kubernetes'.
func archOf(a ec2types.ArchitectureValues) string {
	switch a {
	case ec2types.ArchitectureValuesX8664:
		return v1.ArchitectureAmd64
	case ec2types.ArchitectureValuesArm64:
		return v1.ArchitectureArm64
	}
	return ""
}
