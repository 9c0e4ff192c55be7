package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// EKSAPI is the EKS calls the join check makes; *eks.Client satisfies it.
type EKSAPI interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
	ListAccessEntries(ctx context.Context, in *eks.ListAccessEntriesInput, opts ...func(*eks.Options)) (*eks.ListAccessEntriesOutput, error)
	DescribeAccessEntry(ctx context.Context, in *eks.DescribeAccessEntryInput, opts ...func(*eks.Options)) (*eks.DescribeAccessEntryOutput, error)
}

// IAMAPI is the IAM calls the join check makes to learn the node role's ARN; *iam.Client
// satisfies it.
type IAMAPI interface {
	GetRole(ctx context.Context, in *iam.GetRoleInput, opts ...func(*iam.Options)) (*iam.GetRoleOutput, error)
	GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, opts ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
}

// STSAPI tells the controller's own account and role; *sts.Client satisfies it.
type STSAPI interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, opts ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

// InstanceTypes lists a node class's instance types (instancetype.Provider).
type InstanceTypes interface {
	List(ctx context.Context, nodeClass *awsv1.EC2NodeClass) ([]*cloudprovider.InstanceType, error)
}

// AWSAuthName is the ConfigMap aws-iam-authenticator maps roles from. Reading it needs RBAC get
// (and list/watch, to be told when it changes) on this one ConfigMap.
var AWSAuthName = client.ObjectKey{Namespace: "kube-system", Name: "aws-auth"}

// JoinChecker observes what decides whether a class's nodes can join (the node role's ARN, the
// cluster's authentication mode and access entries, kube-system/aws-auth, the NodePools using the
// class, the instance types) and runs nodejoin.Check on it. What it cannot read is passed as not
// visible, never guessed.
type JoinChecker struct {
	eks           EKSAPI
	iam           IAMAPI
	sts           STSAPI
	kube          client.Reader
	instanceTypes InstanceTypes
	cluster       userdata.Cluster
}

// NewJoinChecker returns a join checker. kube reads NodePools and kube-system/aws-auth; instanceTypes
// may be nil.
func NewJoinChecker(eksAPI EKSAPI, iamAPI IAMAPI, stsAPI STSAPI, kube client.Reader, instanceTypes InstanceTypes, cluster userdata.Cluster) *JoinChecker {
	return &JoinChecker{eks: eksAPI, iam: iamAPI, sts: stsAPI, kube: kube, instanceTypes: instanceTypes, cluster: cluster}
}

// Inputs observes the class's join inputs. Failures to read leave the input unknown, and are
// logged at V(1); only the NodePool list, without which nothing can be said, is an error.
func (j *JoinChecker) Inputs(ctx context.Context, nc *awsv1.EC2NodeClass) (nodejoin.Inputs, error) {
	logger := log.FromContext(ctx).V(1)
	in := nodejoin.Inputs{NodeClass: nc, Cluster: j.cluster}
	pools := &v1.NodePoolList{}
	if err := j.kube.List(ctx, pools); err != nil {
		return in, fmt.Errorf("listing nodepools, %w", err)
	}
	for i := range pools.Items {
		if ref := pools.Items[i].Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == nc.Name {
			in.NodePools = append(in.NodePools, &pools.Items[i])
		}
	}
	if id, err := j.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); err != nil {
		logger.Info("Reading the caller identity", "error", err.Error())
	} else {
		in.AccountID = aws.ToString(id.Account)
		in.ControllerRoleARN = roleOfCaller(aws.ToString(id.Arn))
	}
	in.NodeRoleARN = j.nodeRoleARN(ctx, nc)
	if out, err := j.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(j.cluster.Name)}); err != nil {
		logger.Info("Describing the EKS cluster", "error", err.Error())
	} else if out.Cluster != nil && out.Cluster.AccessConfig != nil {
		in.AuthenticationMode = string(out.Cluster.AccessConfig.AuthenticationMode)
	}
	if entries, err := j.accessEntries(ctx, in.NodeRoleARN); err != nil {
		logger.Info("Reading EKS access entries", "error", err.Error())
	} else {
		in.AccessEntries, in.AccessEntriesVisible = entries, true
	}
	cm := &corev1.ConfigMap{}
	switch err := j.kube.Get(ctx, AWSAuthName, cm); {
	case err == nil:
		in.AWSAuth = &nodejoin.AWSAuth{Found: true, MapRoles: cm.Data["mapRoles"]}
	case apierrors.IsNotFound(err):
		in.AWSAuth = &nodejoin.AWSAuth{}
	default:
		logger.Info("Reading kube-system/aws-auth", "error", err.Error())
	}
	if j.instanceTypes != nil {
		if types, err := j.instanceTypes.List(ctx, nc); err == nil {
			in.InstanceTypes = types
		}
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, awsv1.ConditionTypeValidationSucceeded); c != nil && c.Status == "False" && c.Reason != ReasonValidationDeferred {
		in.Validation = &nodejoin.Validation{Reason: c.Reason, Message: c.Message}
	}
	return in, nil
}

// Check observes and checks: the findings ranked, as nodejoin.Check returns them.
func (j *JoinChecker) Check(ctx context.Context, nc *awsv1.EC2NodeClass) ([]nodejoin.Finding, error) {
	in, err := j.Inputs(ctx, nc)
	if err != nil {
		return nil, err
	}
	return nodejoin.Check(in), nil
}

func (j *JoinChecker) nodeRoleARN(ctx context.Context, nc *awsv1.EC2NodeClass) string {
	if nc.Spec.Role != "" {
		name := nc.Spec.Role
		if _, after, ok := strings.Cut(name, ":role/"); ok {
			name = after[strings.LastIndex(after, "/")+1:]
		}
		out, err := j.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
		if err != nil || out.Role == nil {
			log.FromContext(ctx).V(1).Info("Reading the node role", "role", name, "error", fmt.Sprint(err))
			return ""
		}
		return aws.ToString(out.Role.Arn)
	}
	if nc.Spec.InstanceProfile != nil {
		out, err := j.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: nc.Spec.InstanceProfile})
		if err != nil || out.InstanceProfile == nil || len(out.InstanceProfile.Roles) == 0 {
			log.FromContext(ctx).V(1).Info("Reading the instance profile's role", "instanceProfile", *nc.Spec.InstanceProfile, "error", fmt.Sprint(err))
			return ""
		}
		return aws.ToString(out.InstanceProfile.Roles[0].Arn)
	}
	return ""
}

// accessEntries lists the cluster's access entries and describes the node role's (the only one
// whose type matters).
func (j *JoinChecker) accessEntries(ctx context.Context, nodeRole string) ([]nodejoin.AccessEntry, error) {
	var out []nodejoin.AccessEntry
	var token *string
	for {
		page, err := j.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: aws.String(j.cluster.Name), NextToken: token})
		if err != nil {
			return nil, err
		}
		for _, arn := range page.AccessEntries {
			entry := nodejoin.AccessEntry{PrincipalARN: arn}
			if nodeRole != "" && nodejoin.CanonicalRoleARN(arn) == nodejoin.CanonicalRoleARN(nodeRole) {
				d, err := j.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: aws.String(j.cluster.Name), PrincipalArn: aws.String(arn)})
				if err != nil {
					return nil, err
				}
				if d.AccessEntry == nil {
					return nil, errors.New("describing access entry, no entry in the response")
				}
				entry.Type = aws.ToString(d.AccessEntry.Type)
				entry.Username = aws.ToString(d.AccessEntry.Username)
				entry.KubernetesGroups = d.AccessEntry.KubernetesGroups
			}
			out = append(out, entry)
		}
		if page.NextToken == nil {
			return out, nil
		}
		token = page.NextToken
	}
}

// roleOfCaller turns arn:aws:sts::1:assumed-role/Name/session into arn:aws:iam::1:role/Name.
func roleOfCaller(arn string) string {
	prefix, rest, ok := strings.Cut(arn, ":assumed-role/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return strings.Replace(prefix, ":sts:", ":iam:", 1) + ":role/" + name
}
