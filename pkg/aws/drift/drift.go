package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Drift reasons, the reason of a NodeClaim's Drifted condition.
const (
	ReasonNodeClass     cloudprovider.DriftReason = "NodeClassDrift"
	ReasonAMI           cloudprovider.DriftReason = "AMIDrift"
	ReasonSubnet        cloudprovider.DriftReason = "SubnetDrift"
	ReasonSecurityGroup cloudprovider.DriftReason = "SecurityGroupDrift"
)

// HashVersion is written next to the hash (awsv1.AnnotationEC2NodeClassHashVersion). Change it
// whenever NodeClassHash changes for an unchanged spec, so that hashes of different schemes are
// never compared and an upgrade does not drift every node.
const HashVersion = "v1"

// NodeClassHash hashes the EC2NodeClass spec fields that shape an instance directly: everything
// except the selector terms, whose changes drift only the nodes whose resolved AMI, subnet or
// security groups are no longer selected. Map keys are ordered, so the hash is stable; a new
// optional field left unset does not change it.
func NodeClassHash(nodeClass *awsv1.EC2NodeClass) (string, error) {
	spec := nodeClass.Spec.DeepCopy()
	spec.AMISelectorTerms = nil
	spec.SubnetSelectorTerms = nil
	spec.SecurityGroupSelectorTerms = nil
	spec.CapacityReservationSelectorTerms = nil
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing EC2NodeClass %s, %w", nodeClass.Name, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// Instance is what the caller found of a NodeClaim's instance.
type Instance struct {
	ImageID          string
	SubnetID         string
	SecurityGroupIDs []string
}

// Reason says why the instance no longer matches its EC2NodeClass, or "" when it does. Checks,
// in order: the static hash (when the NodeClaim and the node class carry hashes of the same
// version), the AMI (not among status.amis, or deprecated while a non-deprecated AMI for the same
// requirements exists), the subnet, and the set of security groups. A status list not resolved
// yet (empty) drifts nothing.
func Reason(nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim, inst Instance) cloudprovider.DriftReason {
	if staticDrift(nodeClass, nodeClaim) {
		return ReasonNodeClass
	}
	if amiDrift(nodeClass.Status.AMIs, inst.ImageID) {
		return ReasonAMI
	}
	subnets := nodeClass.Status.Subnets
	if len(subnets) > 0 && !slices.ContainsFunc(subnets, func(s awsv1.Subnet) bool { return s.ID == inst.SubnetID }) {
		return ReasonSubnet
	}
	if groups := nodeClass.Status.SecurityGroups; len(groups) > 0 {
		want := make([]string, 0, len(groups))
		for _, g := range groups {
			want = append(want, g.ID)
		}
		got := slices.Clone(inst.SecurityGroupIDs)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(slices.Compact(want), slices.Compact(got)) {
			return ReasonSecurityGroup
		}
	}
	return ""
}

func staticDrift(nodeClass *awsv1.EC2NodeClass, nodeClaim *v1.NodeClaim) bool {
	ncHash, ncOK := nodeClass.Annotations[awsv1.AnnotationEC2NodeClassHash]
	claimHash, claimOK := nodeClaim.Annotations[awsv1.AnnotationEC2NodeClassHash]
	if !ncOK || !claimOK {
		return false
	}
	if nodeClass.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] != nodeClaim.Annotations[awsv1.AnnotationEC2NodeClassHashVersion] {
		return false
	}
	return ncHash != claimHash
}

func amiDrift(amis []awsv1.AMI, imageID string) bool {
	if len(amis) == 0 {
		return false
	}
	i := slices.IndexFunc(amis, func(a awsv1.AMI) bool { return a.ID == imageID })
	if i < 0 {
		return true
	}
	if !amis[i].Deprecated {
		return false
	}
	return slices.ContainsFunc(amis, func(a awsv1.AMI) bool {
		return !a.Deprecated && reflect.DeepEqual(a.Requirements, amis[i].Requirements)
	})
}
