package nodejoin

import (
	"cmp"
	"fmt"
	"slices"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Severity ranks a finding.
type Severity string

const (
	// SeverityError means nodes of the class certainly cannot join, or cannot register as Joiner
	// requires: launching would waste instances. It holds the class's Ready back.
	SeverityError Severity = "Error"
	// SeverityWarning means nodes may fail to join, but Joiner cannot tell for sure (something it
	// could not see or read).
	SeverityWarning Severity = "Warning"
	// SeverityAdvice means nodes join, but something belongs elsewhere.
	SeverityAdvice Severity = "Advice"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding is one thing wrong, or worth changing, about how a class's nodes join.
type Finding struct {
	// Severity is Error, Warning or Advice.
	Severity Severity `json:"severity"`
	// Object is the object at fault, as Kind/name: EC2NodeClass/default, NodePool/default,
	// ConfigMap/kube-system/aws-auth, AccessEntry/<principal ARN>, IAMRole/<name>.
	Object string `json:"object"`
	// Reason is a stable CamelCase identifier.
	Reason string `json:"reason"`
	// Message says what is wrong and why it matters, quoting the offending line when there is one.
	Message string `json:"message"`
	// Fix is the exact change: a mapRoles entry, an aws eks command, the corrected line.
	Fix string `json:"fix"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s Fix: %s", f.Severity, f.Object, f.Reason, f.Message, f.Fix)
}

// Authentication modes of an EKS cluster (eks:DescribeCluster accessConfig.authenticationMode).
const (
	AuthenticationModeAPI             = "API"
	AuthenticationModeAPIAndConfigMap = "API_AND_CONFIG_MAP"
	AuthenticationModeConfigMap       = "CONFIG_MAP"
)

// AccessEntryTypeEC2Linux is the access entry type nodes of Linux AMIs join with.
const AccessEntryTypeEC2Linux = "EC2_LINUX"

// AccessEntry is one EKS access entry (eks:DescribeAccessEntry).
type AccessEntry struct {
	PrincipalARN     string   `json:"principalArn"`
	Type             string   `json:"type"`
	Username         string   `json:"username,omitempty"`
	KubernetesGroups []string `json:"kubernetesGroups,omitempty"`
}

// AWSAuth is what was read of the kube-system/aws-auth ConfigMap.
type AWSAuth struct {
	// Found is false when the ConfigMap does not exist.
	Found bool `json:"found"`
	// MapRoles is its data.mapRoles, YAML.
	MapRoles string `json:"mapRoles,omitempty"`
}

// Validation is the IAM dry-run validation's result (pkg/aws/validation): Reason is empty when
// it passed.
type Validation struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Inputs are the observations Check reads. Every field but NodeClass may be left empty; a check
// whose observations are missing says less, never more.
type Inputs struct {
	// NodeClass is the EC2NodeClass, with its status (AMIs) as resolved.
	NodeClass *awsv1.EC2NodeClass `json:"nodeClass"`
	// NodePools are the NodePools whose template refers to NodeClass.
	NodePools []*v1.NodePool `json:"nodePools,omitempty"`
	// Cluster is what nodes need to join (name, endpoint...), to render userData as Joiner would.
	Cluster userdata.Cluster `json:"cluster"`
	// AccountID is the cluster's AWS account; empty when unknown.
	AccountID string `json:"accountId,omitempty"`
	// NodeRoleARN is the ARN of the node role (spec.role, or the role of spec.instanceProfile), as
	// IAM returns it: with its path. Empty when unknown; then, with AccountID, the path-less ARN
	// of spec.role is assumed.
	NodeRoleARN string `json:"nodeRoleArn,omitempty"`
	// ControllerRoleARN is Joiner's own role, when known, to name the mistake of mapping it
	// instead of the node role.
	ControllerRoleARN string `json:"controllerRoleArn,omitempty"`
	// AuthenticationMode is the cluster's (API, API_AND_CONFIG_MAP, CONFIG_MAP); empty when
	// unknown.
	AuthenticationMode string `json:"authenticationMode,omitempty"`
	// AccessEntries are the cluster's access entries; AccessEntriesVisible says whether they
	// could be listed (false offline or without eks:ListAccessEntries).
	AccessEntries        []AccessEntry `json:"accessEntries,omitempty"`
	AccessEntriesVisible bool          `json:"accessEntriesVisible"`
	// AWSAuth is kube-system/aws-auth, or nil when it could not be read (offline without it in the
	// manifests, or no RBAC to get it).
	AWSAuth *AWSAuth `json:"awsAuth,omitempty"`
	// InstanceTypes are the instance types the class may launch, with their requirements
	// (kubernetes.io/arch...). When empty, the architecture check uses the NodePools'
	// kubernetes.io/arch requirement alone.
	InstanceTypes []*cloudprovider.InstanceType `json:"-"`
	// Validation is the IAM dry-run validation's result, nil when it was not run.
	Validation *Validation `json:"validation,omitempty"`
}

// Check runs every check on the inputs and returns the findings ranked: errors first, then
// warnings, then advice, each group in the order the checks ran. It returns nil when nodes of the
// class can join as far as the inputs tell.
func Check(in Inputs) []Finding {
	if in.NodeClass == nil {
		return nil
	}
	var out []Finding
	out = append(out, checkRole(in)...)
	out = append(out, checkUserData(in)...)
	out = append(out, checkArchitectures(in)...)
	for _, f := range checkValidation(in) {
		// The validation fails first on a userData problem, already reported above.
		if !slices.ContainsFunc(out, func(g Finding) bool { return g.Reason == f.Reason }) {
			out = append(out, f)
		}
	}
	out = dedupe(out)
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(a.Severity.rank(), b.Severity.rank()) })
	return out
}

// HasError reports whether any finding is an Error.
func HasError(findings []Finding) bool {
	return slices.ContainsFunc(findings, func(f Finding) bool { return f.Severity == SeverityError })
}

func dedupe(in []Finding) []Finding {
	var out []Finding
	for _, f := range in {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func nodeClassObject(nc *awsv1.EC2NodeClass) string { return "EC2NodeClass/" + nc.Name }

func checkValidation(in Inputs) []Finding {
	if in.Validation == nil || in.Validation.Reason == "" {
		return nil
	}
	return []Finding{{
		Severity: SeverityError, Object: nodeClassObject(in.NodeClass), Reason: in.Validation.Reason,
		Message: in.Validation.Message,
		Fix:     "grant the controller's role what the message names (the statement to add is in the message); the class is checked again within a minute",
	}}
}
