package doctor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/nodeclass"
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Finding is one finding: severity, object, reason, message and fix (see nodejoin.Finding).
type Finding = nodejoin.Finding

// Modes of a Report.
const (
	ModeOffline = "offline"
	ModeLive    = "live"
)

// Observations are what a mode could see. Fields left empty were not seen; a check whose
// observations are missing says less, never more.
type Observations struct {
	// Mode is ModeOffline or ModeLive.
	Mode string
	// NodePools, NodeClasses and Pods are the objects checked. Pods are the pods waiting for a
	// node (live: unscheduled; offline: every pod the manifests would create).
	NodePools   []*v1.NodePool
	NodeClasses []*awsv1.EC2NodeClass
	Pods        []*corev1.Pod
	// NodeClassesComplete says NodeClasses are every EC2NodeClass of the cluster (live), so a
	// nodeClassRef naming none of them is certainly broken. Offline the class may exist in the
	// cluster already.
	NodeClassesComplete bool
	// Cluster is what nodes join with, to render userData as Joiner would.
	Cluster userdata.Cluster
	// AccountID, ControllerRoleARN and AuthenticationMode are empty when unknown.
	AccountID string
	// AccountSource says where AccountID came from, for the report.
	AccountSource      string
	ControllerRoleARN  string
	AuthenticationMode string
	// AccessEntries are visible only live, with eks:ListAccessEntries.
	AccessEntries        []nodejoin.AccessEntry
	AccessEntriesVisible bool
	// AWSAuth is kube-system/aws-auth, nil when not seen.
	AWSAuth *nodejoin.AWSAuth
	// NodeRoleARNs are the node roles as IAM returns them (path included), by EC2NodeClass name.
	NodeRoleARNs map[string]string
	// InstanceTypes are the instance types each EC2NodeClass may launch, by class name; live only.
	InstanceTypes map[string][]*cloudprovider.InstanceType
	// Findings are what reading itself found (a role or AMI that does not exist, an object that
	// could not be read).
	Findings []Finding
}

// Report is doctor's answer.
type Report struct {
	Mode string `json:"mode"`
	// AccountID is the account the node roles were taken to be in, and AccountSource where it
	// came from; empty when unknown.
	AccountID     string `json:"accountId,omitempty"`
	AccountSource string `json:"accountSource,omitempty"`
	// AuthenticationMode is the cluster's, empty when unknown.
	AuthenticationMode string `json:"authenticationMode,omitempty"`
	// Findings are ranked: errors, then warnings, then advice.
	Findings []Finding `json:"findings"`
	// Errors, Warnings and Advice count the findings of each severity.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Advice   int `json:"advice"`
	// Checked counts the objects checked.
	Checked Checked `json:"checked"`
}

// Checked counts what a Report looked at.
type Checked struct {
	NodeClasses int `json:"nodeClasses"`
	NodePools   int `json:"nodePools"`
	Pods        int `json:"pods"`
}

// HasError reports whether any finding is an Error: `joiner doctor` then exits 1.
func (r *Report) HasError() bool { return r.Errors > 0 }

// Diagnose runs every check on the observations.
func Diagnose(obs *Observations) *Report {
	var findings []Finding
	findings = append(findings, obs.Findings...)
	findings = append(findings, checkNodeClasses(obs)...)
	findings = append(findings, checkNodePools(obs)...)
	findings = append(findings, checkPods(obs)...)
	var ranked []Finding
	for _, f := range findings {
		if !slices.Contains(ranked, f) {
			ranked = append(ranked, f)
		}
	}
	slices.SortStableFunc(ranked, func(a, b Finding) int { return cmp.Compare(rank(a.Severity), rank(b.Severity)) })
	r := &Report{Mode: obs.Mode, Findings: ranked, AccountID: obs.AccountID, AccountSource: obs.AccountSource, AuthenticationMode: obs.AuthenticationMode,
		Checked: Checked{NodeClasses: len(obs.NodeClasses), NodePools: len(obs.NodePools), Pods: len(obs.Pods)}}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range ranked {
		switch f.Severity {
		case nodejoin.SeverityError:
			r.Errors++
		case nodejoin.SeverityWarning:
			r.Warnings++
		default:
			r.Advice++
		}
	}
	return r
}

func rank(s nodejoin.Severity) int {
	switch s {
	case nodejoin.SeverityError:
		return 0
	case nodejoin.SeverityWarning:
		return 1
	}
	return 2
}

// poolsOf returns the NodePools whose nodeClassRef names the class.
func poolsOf(obs *Observations, name string) []*v1.NodePool {
	var out []*v1.NodePool
	for _, np := range obs.NodePools {
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == name {
			out = append(out, np)
		}
	}
	return out
}

// checkNodeClasses runs nodejoin.Check on every class. Classes sharing a node role share its
// mapping mistake: a finding about another object (aws-auth, an access entry) with the same
// reason and fix is reported once, naming the other classes it holds for.
func checkNodeClasses(obs *Observations) []Finding {
	var out []Finding
	also := map[int][]string{}
	for _, nc := range obs.NodeClasses {
		for _, f := range checkNodeClass(obs, nc) {
			i := slices.IndexFunc(out, func(g Finding) bool {
				return !strings.HasPrefix(f.Object, "EC2NodeClass/") && g.Severity == f.Severity && g.Object == f.Object && g.Reason == f.Reason && g.Fix == f.Fix
			})
			if i < 0 {
				out = append(out, f)
				continue
			}
			if g := out[i]; g.Message != f.Message && !slices.Contains(also[i], nc.Name) {
				also[i] = append(also[i], nc.Name)
			}
		}
	}
	for i, names := range also {
		out[i].Message = strings.TrimSuffix(out[i].Message, ".") + fmt.Sprintf(". The same holds for EC2NodeClass %s.", strings.Join(names, ", "))
	}
	return out
}

// checkNodeClass runs nodejoin.Check on one class. Offline, the reason a node role is unknown is
// the account id, and the fix says how to give it.
func checkNodeClass(obs *Observations, nc *awsv1.EC2NodeClass) []Finding {
	in := nodejoin.Inputs{
		NodeClass:            nc,
		NodePools:            poolsOf(obs, nc.Name),
		Cluster:              obs.Cluster,
		AccountID:            obs.AccountID,
		NodeRoleARN:          obs.NodeRoleARNs[nc.Name],
		ControllerRoleARN:    obs.ControllerRoleARN,
		AuthenticationMode:   obs.AuthenticationMode,
		AccessEntries:        obs.AccessEntries,
		AccessEntriesVisible: obs.AccessEntriesVisible,
		AWSAuth:              obs.AWSAuth,
		Validation:           validation(nc),
		InstanceTypes:        obs.InstanceTypes[nc.Name],
	}
	out := nodejoin.Check(in)
	// Reading already said why the role is unknown (the instance profile or role does not exist).
	object := "EC2NodeClass/" + nc.Name
	if slices.ContainsFunc(obs.Findings, func(f Finding) bool {
		return f.Object == object && slices.Contains([]string{ReasonNodeRoleNotFound, ReasonInstanceProfileNotFound, ReasonInstanceProfileNoRole}, f.Reason)
	}) {
		out = slices.DeleteFunc(out, func(f Finding) bool { return f.Reason == nodejoin.ReasonNodeRoleUnknown })
	}
	for i, f := range out {
		if f.Reason != nodejoin.ReasonNodeRoleUnknown || obs.Mode != ModeOffline {
			continue
		}
		if nc.Spec.Role != "" {
			out[i].Message = fmt.Sprintf("the account id of EC2NodeClass %s's node role %s is not known offline, so doctor cannot match it against kube-system/aws-auth", nc.Name, nc.Spec.Role)
			out[i].Fix = "pass --account ACCOUNT_ID, or include the controller's ServiceAccount with its eks.amazonaws.com/role-arn annotation in the manifests"
		} else {
			out[i].Message = fmt.Sprintf("the role of EC2NodeClass %s's instance profile %s cannot be read offline, so doctor cannot match it against kube-system/aws-auth", nc.Name, ptrString(nc.Spec.InstanceProfile))
			out[i].Fix = "run joiner doctor live (without -f) to read the instance profile's role from IAM, or check by hand that its role is mapped"
		}
	}
	if profile := ptrString(nc.Spec.InstanceProfile); profile != "" && obs.Mode == ModeOffline && validation(nc) == nil {
		out = append(out, Finding{Severity: nodejoin.SeverityAdvice, Object: "EC2NodeClass/" + nc.Name, Reason: "InstanceProfilePassRoleUnverified",
			Message: fmt.Sprintf("EC2NodeClass %s attaches the existing instance profile %s: every launch passes its role, which the controller's policy must allow in iam:PassRole, and doctor cannot read that policy offline", nc.Name, profile),
			Fix:     fmt.Sprintf("make sure the controller's policy allows iam:PassRole on the role of instance profile %s (aws iam get-instance-profile --instance-profile-name %s), with iam:PassedToService ec2.amazonaws.com; joiner doctor without -f checks the class's validation", profile, profile)})
	}
	return out
}

// validation is the class's ValidationSucceeded=False condition, when its status says so. A
// validation deferred until the class's selectors resolve is no denial.
func validation(nc *awsv1.EC2NodeClass) *nodejoin.Validation {
	c := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason == nodeclass.ReasonValidationDeferred {
		return nil
	}
	return &nodejoin.Validation{Reason: c.Reason, Message: c.Message}
}

// quoteList renders values for a message: "a", "b".
func quoteList(values []string) string {
	if len(values) == 0 {
		return "none"
	}
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
