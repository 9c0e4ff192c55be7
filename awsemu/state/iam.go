package state

import (
	"time"
)

// IAM is the account's identities.
type IAM struct {
	Roles map[string]*Role
	// Users are the account's IAM users by name.
	Users            map[string]*User
	InstanceProfiles map[string]*InstanceProfile
	// AccessKeys maps an access key id to the name of the role whose session it stands for.
	AccessKeys map[string]string
	// AuthorizationMessages maps an encoded authorization failure message to its decoded JSON.
	AuthorizationMessages map[string]string
	// Decisions is the authorization log: every request authz evaluated, in order, at most
	// MaxDecisions (the oldest are dropped, and counted in DroppedDecisions).
	Decisions        []Decision
	DroppedDecisions int
	// DroppedByRole counts the dropped decisions by role ARN: a check of one role's decisions is
	// incomplete only when some of that role's were dropped, not when other principals (the
	// administrator, the nodes) filled the log.
	DroppedByRole map[string]int
}

// MaxDecisions bounds the authorization log, of every principal together: a day of a
// controller's calls fits.
const MaxDecisions = 200000

// Decision is one authorization the emulator decided: who asked for which action on which
// resource, in which region (the signature's), and whether the policies allowed it.
type Decision struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Role      string    `json:"role"`
	Action    string    `json:"action"`
	Resource  string    `json:"resource"`
	Region    string    `json:"region"`
	Allowed   bool      `json:"allowed"`
}

// RecordDecision appends d to the authorization log, dropping the oldest entry when it is full.
func (i *IAM) RecordDecision(d Decision) {
	if len(i.Decisions) >= MaxDecisions {
		if i.DroppedByRole == nil {
			i.DroppedByRole = map[string]int{}
		}
		i.DroppedByRole[i.Decisions[0].Role]++
		i.Decisions = i.Decisions[1:]
		i.DroppedDecisions++
	}
	i.Decisions = append(i.Decisions, d)
}

func newIAM() *IAM {
	return &IAM{
		Roles: map[string]*Role{}, Users: map[string]*User{}, InstanceProfiles: map[string]*InstanceProfile{},
		AccessKeys: map[string]string{}, AuthorizationMessages: map[string]string{},
	}
}

// Role is an IAM role with its inline policies (name → JSON policy document).
type Role struct {
	Name                     string
	ID                       string
	ARN                      string
	Path                     string
	AssumeRolePolicyDocument string
	Description              string
	Policies                 map[string]string
	// ManagedPolicyARNs are the managed policies attached to the role, in attachment order.
	ManagedPolicyARNs []string
	CreatedAt         time.Time
	Tags              Tags
}

// User is an IAM user: a principal access entries and policies can name. The emulator gives
// users no access keys: nothing signs requests as one.
type User struct {
	Name string
	ID   string
	ARN  string
	Path string
	// ManagedPolicyARNs are the managed policies attached to the user, in attachment order.
	ManagedPolicyARNs []string
	CreatedAt         time.Time
	Tags              Tags
}

// InstanceProfile is an IAM instance profile; AWS allows at most one role in it.
type InstanceProfile struct {
	Name      string
	ID        string
	ARN       string
	Path      string
	RoleName  string // "" when it holds no role
	CreatedAt time.Time
	Tags      Tags
}

// awsManagedPolicies are the AWS managed policies the emulator knows, by ARN, with their
// documents as AWS publishes them (the statements that matter to a node or a controller; the
// ECR, SSM and CNI actions are listed as AWS lists them). AttachRolePolicy accepts only these
// and the account's own policies; authorization evaluates them like inline policies.
var awsManagedPolicies = map[string]string{
	"arn:aws:iam::aws:policy/AdministratorAccess": AllowAllPolicy,
	"arn:aws:iam::aws:policy/PowerUserAccess": `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","NotAction":["iam:*","organizations:*","account:*"],"Resource":"*"},` +
		`{"Effect":"Allow","Action":["iam:CreateServiceLinkedRole","iam:DeleteServiceLinkedRole","iam:ListRoles","organizations:DescribeOrganization","account:ListRegions","account:GetAccountInformation"],"Resource":"*"}]}`,
	"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy": `{"Version":"2012-10-17","Statement":[{"Sid":"WorkerNodePermissions","Effect":"Allow","Action":[` +
		`"ec2:DescribeInstances","ec2:DescribeInstanceTypes","ec2:DescribeRouteTables","ec2:DescribeSecurityGroups","ec2:DescribeSubnets",` +
		`"ec2:DescribeVolumes","ec2:DescribeVolumesModifications","ec2:DescribeVpcs","eks:DescribeCluster","eks-auth:AssumeRoleForPodIdentity"],"Resource":"*"}]}`,
	"arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy": `{"Version":"2012-10-17","Statement":[{"Sid":"AmazonEKSCNIPolicy","Effect":"Allow","Action":[` +
		`"ec2:AssignPrivateIpAddresses","ec2:AttachNetworkInterface","ec2:CreateNetworkInterface","ec2:DeleteNetworkInterface","ec2:DescribeInstances",` +
		`"ec2:DescribeTags","ec2:DescribeNetworkInterfaces","ec2:DescribeInstanceTypes","ec2:DescribeSubnets","ec2:DetachNetworkInterface",` +
		`"ec2:ModifyNetworkInterfaceAttribute","ec2:UnassignPrivateIpAddresses"],"Resource":"*"},` +
		`{"Sid":"AmazonEKSCNIPolicyENITag","Effect":"Allow","Action":["ec2:CreateTags"],"Resource":["arn:aws:ec2:*:*:network-interface/*"]}]}`,
	"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":[` +
		`"ecr:GetAuthorizationToken","ecr:BatchCheckLayerAvailability","ecr:GetDownloadUrlForLayer","ecr:GetRepositoryPolicy","ecr:DescribeRepositories",` +
		`"ecr:ListImages","ecr:DescribeImages","ecr:BatchGetImage","ecr:GetLifecyclePolicy","ecr:GetLifecyclePolicyPreview","ecr:ListTagsForResource",` +
		`"ecr:DescribeImageScanFindings"],"Resource":"*"}]}`,
	"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":[` +
		`"ecr:GetAuthorizationToken","ecr:BatchGetImage","ecr:GetDownloadUrlForLayer","ecr:BatchImportUpstreamImage"],"Resource":"*"}]}`,
	"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":[` +
		`"ssm:DescribeAssociation","ssm:GetDeployablePatchSnapshotForInstance","ssm:GetDocument","ssm:DescribeDocument","ssm:GetManifest",` +
		`"ssm:GetParameter","ssm:GetParameters","ssm:ListAssociations","ssm:ListInstanceAssociations","ssm:PutInventory","ssm:PutComplianceItems",` +
		`"ssm:PutConfigurePackageResult","ssm:UpdateAssociationStatus","ssm:UpdateInstanceAssociationStatus","ssm:UpdateInstanceInformation"],"Resource":"*"},` +
		`{"Effect":"Allow","Action":["ssmmessages:CreateControlChannel","ssmmessages:CreateDataChannel","ssmmessages:OpenControlChannel","ssmmessages:OpenDataChannel"],"Resource":"*"},` +
		`{"Effect":"Allow","Action":["ec2messages:AcknowledgeMessage","ec2messages:DeleteMessage","ec2messages:FailMessage","ec2messages:GetEndpoint","ec2messages:GetMessages","ec2messages:SendReply"],"Resource":"*"}]}`,
}

// ManagedPolicyDocument returns the document of an AWS managed policy the emulator knows.
func ManagedPolicyDocument(arn string) (string, bool) {
	doc, ok := awsManagedPolicies[arn]
	return doc, ok
}

// ManagedPolicyARNs lists the AWS managed policies the emulator knows, sorted.
func ManagedPolicyARNs() []string { return SortedKeys(awsManagedPolicies) }
