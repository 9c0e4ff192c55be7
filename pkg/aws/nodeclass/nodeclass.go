package nodeclass

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	"github.com/joinerhq/joiner/pkg/aws/ami"
	"github.com/joinerhq/joiner/pkg/aws/instanceprofile"
	"github.com/joinerhq/joiner/pkg/aws/network"
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
)

// EC2API is the EC2 calls status resolution makes; *ec2.Client satisfies it.
type EC2API interface {
	network.EC2API
	ami.EC2API
}

// Validator checks that the node class can launch (pkg/aws/validation); nil skips validation,
// leaving ValidationSucceeded unset.
type Validator interface {
	// Validate returns "" when the node class may launch, else a CamelCase reason and a message.
	Validate(ctx context.Context, nodeClass *awsv1.EC2NodeClass) (reason, message string, err error)
}

// Resolver resolves EC2NodeClass status.
type Resolver struct {
	ec2               EC2API
	ssm               ami.SSMAPI
	profiles          *instanceprofile.Provider
	validator         Validator
	kubernetesVersion string
	clock             clock.PassiveClock
	join              *JoinChecker
}

// WithJoinChecker makes Resolve set NodeJoinReady from the join checker's findings; without
// one, NodeJoinReady is left unset.
func (r *Resolver) WithJoinChecker(j *JoinChecker) *Resolver {
	r.join = j
	return r
}

// NewResolver returns a resolver for a cluster of the given Kubernetes version (major.minor, for
// AMI aliases).
func NewResolver(ec2API EC2API, ssmAPI ami.SSMAPI, profiles *instanceprofile.Provider, validator Validator, kubernetesVersion string, clk clock.PassiveClock) *Resolver {
	return &Resolver{ec2: ec2API, ssm: ssmAPI, profiles: profiles, validator: validator, kubernetesVersion: kubernetesVersion, clock: clk}
}

// Condition reasons.
const (
	ReasonResolved           = "Resolved"
	ReasonNoneMatched        = "NoneMatched"
	ReasonDescribeFailed     = "DescribeFailed"
	ReasonInstanceProfile    = "InstanceProfileFailed"
	ReasonNotReady           = "DependenciesNotReady"
	ReasonReady              = "Ready"
	ReasonValidated          = "Validated"
	ReasonValidationFailed   = "ValidationFailed"
	ReasonValidationDeferred = "ValidationDeferred"
	ReasonNodesCanJoin       = "NodesCanJoin"
	ReasonJoinCheckFailed    = "JoinCheckFailed"
)

// Resolve writes nodeClass.Status: every list and condition, and Ready True only when all the
// conditions are. An AWS error leaves the affected list unchanged with its condition False; the
// returned error joins the errors worth retrying soon.
func (r *Resolver) Resolve(ctx context.Context, nodeClass *awsv1.EC2NodeClass) error {
	_, err := r.ResolveWithFindings(ctx, nodeClass)
	return err
}

// ResolveWithFindings is Resolve, and also returns the join findings behind NodeJoinReady (none
// without a join checker). NodeJoinReady holds Ready back only when a finding is an Error.
func (r *Resolver) ResolveWithFindings(ctx context.Context, nodeClass *awsv1.EC2NodeClass) ([]nodejoin.Finding, error) {
	var errs []string
	set := func(condition string, ok bool, reason, message string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&nodeClass.Status.Conditions, metav1.Condition{
			Type: condition, Status: status, Reason: reason, Message: message, ObservedGeneration: nodeClass.Generation,
			LastTransitionTime: metav1.NewTime(r.clock.Now()),
		})
	}
	if subnets, err := network.Subnets(ctx, r.ec2, nodeClass.Spec.SubnetSelectorTerms); err != nil {
		errs = append(errs, err.Error())
		set(awsv1.ConditionTypeSubnetsReady, false, ReasonDescribeFailed, err.Error())
	} else {
		nodeClass.Status.Subnets = nil
		for _, s := range subnets {
			nodeClass.Status.Subnets = append(nodeClass.Status.Subnets, s.Status())
		}
		set(awsv1.ConditionTypeSubnetsReady, len(subnets) > 0, resolvedReason(len(subnets)), countMessage(len(subnets), "subnet", "spec.subnetSelectorTerms"))
	}
	if groups, err := network.SecurityGroups(ctx, r.ec2, nodeClass.Spec.SecurityGroupSelectorTerms); err != nil {
		errs = append(errs, err.Error())
		set(awsv1.ConditionTypeSecurityGroupsReady, false, ReasonDescribeFailed, err.Error())
	} else {
		nodeClass.Status.SecurityGroups = groups
		set(awsv1.ConditionTypeSecurityGroupsReady, len(groups) > 0, resolvedReason(len(groups)), countMessage(len(groups), "security group", "spec.securityGroupSelectorTerms"))
	}
	if images, err := ami.Resolve(ctx, r.ssm, r.ec2, nodeClass.Spec.AMISelectorTerms, r.kubernetesVersion, r.clock.Now()); err != nil {
		errs = append(errs, err.Error())
		set(awsv1.ConditionTypeAMIsReady, false, ReasonDescribeFailed, err.Error())
	} else {
		nodeClass.Status.AMIs = ami.Select(images)
		n := len(nodeClass.Status.AMIs)
		set(awsv1.ConditionTypeAMIsReady, n > 0, resolvedReason(n), countMessage(n, "AMI", "spec.amiSelectorTerms"))
	}
	if name, err := r.profiles.Ensure(ctx, nodeClass); err != nil {
		errs = append(errs, err.Error())
		set(awsv1.ConditionTypeInstanceProfileReady, false, ReasonInstanceProfile, err.Error())
	} else {
		nodeClass.Status.InstanceProfile = name
		set(awsv1.ConditionTypeInstanceProfileReady, true, ReasonResolved, "instance profile "+name)
	}
	if r.validator != nil {
		r.validate(ctx, nodeClass, set, &errs)
	}
	var findings []nodejoin.Finding
	if r.join != nil {
		var err error
		if findings, err = r.join.Check(ctx, nodeClass); err != nil {
			// Not knowing is not a certain failure: Unknown, which does not hold Ready back.
			errs = append(errs, err.Error())
			meta.SetStatusCondition(&nodeClass.Status.Conditions, metav1.Condition{
				Type: awsv1.ConditionTypeNodeJoinReady, Status: metav1.ConditionUnknown, Reason: ReasonJoinCheckFailed, Message: err.Error(),
				ObservedGeneration: nodeClass.Generation, LastTransitionTime: metav1.NewTime(r.clock.Now()),
			})
		} else {
			ok, reason, message := JoinCondition(findings)
			set(awsv1.ConditionTypeNodeJoinReady, ok, reason, message)
		}
	}
	if message := notReadyMessage(nodeClass.Status.Conditions); message != "" {
		set(awsv1.ConditionTypeReady, false, ReasonNotReady, message)
	} else {
		set(awsv1.ConditionTypeReady, true, ReasonReady, "")
	}
	if len(errs) > 0 {
		return findings, fmt.Errorf("resolving EC2NodeClass %s, %s", nodeClass.Name, strings.Join(errs, "; "))
	}
	return findings, nil
}

// notReadyMessage is the Ready message of a class some of whose conditions hold it back, or ""
// when none does: each such condition with its own message, which names the field and the fix.
// The NodePools of the class copy this message into theirs, and provisioning into the events of
// the pods that wait, so it must say what is wrong, not only which condition is. A deferred
// validation only waits for the others and is named without its message.
func notReadyMessage(conditions []metav1.Condition) string {
	var parts []string
	for _, c := range conditions {
		if c.Type == awsv1.ConditionTypeReady || c.Status == metav1.ConditionTrue ||
			(c.Type == awsv1.ConditionTypeNodeJoinReady && c.Status != metav1.ConditionFalse) {
			continue
		}
		if c.Message == "" || c.Reason == ReasonValidationDeferred {
			parts = append(parts, c.Type)
			continue
		}
		parts = append(parts, c.Type+": "+c.Message)
	}
	if len(parts) == 0 {
		return ""
	}
	return "not ready: " + strings.Join(parts, "; ")
}

// JoinCondition is NodeJoinReady of ranked findings: False only with an Error about the class
// itself (its role, userData, IAM), with that finding's reason, message and fix; otherwise True
// with the top finding's. An Error about one NodePool (no AMI for its architectures) does not
// hold the class back: other NodePools may use it, and launches never pair an AMI with an
// instance type of another architecture.
func JoinCondition(findings []nodejoin.Finding) (ok bool, reason, message string) {
	if len(findings) == 0 {
		return true, ReasonNodesCanJoin, ""
	}
	top, ok := findings[0], true
	for _, f := range findings {
		if f.Severity == nodejoin.SeverityError && !strings.HasPrefix(f.Object, "NodePool/") {
			top, ok = f, false
			break
		}
	}
	message = fmt.Sprintf("%s %s: %s Fix: %s", top.Severity, top.Object, top.Message, top.Fix)
	if n := len(findings) - 1; n > 0 {
		message += fmt.Sprintf(" (and %d more: see the EC2NodeClass's events)", n)
	}
	return ok, top.Reason, message
}

// validate sets ValidationSucceeded once everything it depends on is resolved.
func (r *Resolver) validate(ctx context.Context, nodeClass *awsv1.EC2NodeClass, set func(string, bool, string, string), errs *[]string) {
	for _, c := range []string{awsv1.ConditionTypeSubnetsReady, awsv1.ConditionTypeSecurityGroupsReady, awsv1.ConditionTypeAMIsReady, awsv1.ConditionTypeInstanceProfileReady} {
		if !meta.IsStatusConditionTrue(nodeClass.Status.Conditions, c) {
			set(awsv1.ConditionTypeValidationSucceeded, false, ReasonValidationDeferred, "validation waits for "+c)
			return
		}
	}
	reason, message, err := r.validator.Validate(ctx, nodeClass)
	switch {
	case err != nil:
		*errs = append(*errs, err.Error())
		set(awsv1.ConditionTypeValidationSucceeded, false, ReasonValidationFailed, err.Error())
	case reason != "":
		set(awsv1.ConditionTypeValidationSucceeded, false, reason, message)
	default:
		set(awsv1.ConditionTypeValidationSucceeded, true, ReasonValidated, "")
	}
}

func resolvedReason(n int) string {
	if n == 0 {
		return ReasonNoneMatched
	}
	return ReasonResolved
}

func countMessage(n int, what, field string) string {
	if n == 0 {
		return fmt.Sprintf("no %s matches %s: check the terms' ids and tags", what, field)
	}
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
