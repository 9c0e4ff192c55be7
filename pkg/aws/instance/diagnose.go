package instance

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// DiagnosisMaxAge is how old a description of the instance's state Diagnose may answer from
// (Recent): less than the lifecycle controller's 15-second diagnosis interval, so each diagnosis
// sees a state newer than the last one's, while the diagnoses of every NodeClaim waiting for its
// Node share one List instead of one DescribeInstances each (a scale-up of hundreds of nodes
// diagnosed each of them every 15 seconds until it joined).
const DiagnosisMaxAge = 10 * time.Second

// Diagnose says why the instance's Node has not joined, from its state (DescribeInstances,
// through Recent) and its console output (GetConsoleOutput, read with nodejoin.ReadConsole). An instance
// described as stopping, stopped, shutting-down or terminated is certain; one that
// DescribeInstances does not list is not: EC2 is eventually consistent and lists a new instance
// only seconds after CreateFleet returns (the liveness timeout and garbage collection handle one
// that truly vanished); so is what nodejoin.ReadConsole finds certain. An error is returned only when
// neither could be read; a console that may not be read (ec2:GetConsoleOutput denied) gives an
// uncertain Diagnosis that says so.
func (p *Provider) Diagnose(ctx context.Context, id string) (cloudprovider.Diagnosis, error) {
	inst, err := p.Recent(ctx, id, DiagnosisMaxAge)
	if cloudprovider.IsNodeClaimNotFoundError(err) {
		// Not listed, or terminated: only EC2's own answer tells which.
		inst, err = p.describeAny(ctx, id)
	}
	if err != nil {
		return cloudprovider.Diagnosis{}, fmt.Errorf("diagnosing instance %s, %w", id, err)
	}
	if inst == nil {
		return notListed(id), nil
	}
	switch ec2types.InstanceStateName(inst.State) {
	case ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated,
		ec2types.InstanceStateNameStopping, ec2types.InstanceStateNameStopped:
		why := "it is " + inst.State
		if inst.StateReason != "" {
			why += " (" + inst.StateReason + ")"
		}
		return gone(id, why), nil
	case ec2types.InstanceStateNamePending:
		return cloudprovider.Diagnosis{Message: fmt.Sprintf("Instance %s is still pending", id)}, nil
	}
	return p.diagnoseRunning(ctx, inst)
}

// describeAny describes the instance in whatever state, terminated included, or returns nil
// when DescribeInstances does not list it.
func (p *Provider) describeAny(ctx context.Context, id string) (*Instance, error) {
	out, err := p.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidInstanceID.NotFound" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(out.Reservations) == 0 || len(out.Reservations[0].Instances) == 0 {
		return nil, nil
	}
	return read(out.Reservations[0].Instances[0]), nil
}

// diagnoseRunning reads the console of a running instance.
func (p *Provider) diagnoseRunning(ctx context.Context, inst *Instance) (cloudprovider.Diagnosis, error) {
	id := inst.ID
	console, err := p.ec2.GetConsoleOutput(ctx, &ec2.GetConsoleOutputInput{InstanceId: aws.String(id)})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "UnauthorizedOperation" {
			return cloudprovider.Diagnosis{Message: fmt.Sprintf("Instance %s is running; its console output cannot be read "+
				"(add ec2:GetConsoleOutput to the controller's policy so that Joiner can say why its Node does not join)", id)}, nil
		}
		return cloudprovider.Diagnosis{}, fmt.Errorf("reading the console of instance %s, %w", id, err)
	}
	raw := aws.ToString(console.Output)
	if raw == "" {
		return cloudprovider.Diagnosis{Message: fmt.Sprintf("Instance %s is running; its console shows nothing yet", id)}, nil
	}
	text, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return cloudprovider.Diagnosis{}, fmt.Errorf("decoding the console of instance %s, %w", id, err)
	}
	d := nodejoin.ReadConsoleOf(string(text), nodejoin.Identity{ClusterName: p.clusterName})
	if d.Reason == cloudprovider.ReasonNodeRoleNotAuthorized && p.roles != nil && inst.InstanceProfileARN != "" {
		// Only a refused registration is worth an IAM call: its fix names the role to map.
		role, err := p.roles.RoleOfInstanceProfile(ctx, inst.InstanceProfileARN)
		if err != nil {
			log.FromContext(ctx).V(1).Info("Reading the instance's node role for its diagnosis", "instance", id, "error", err.Error())
		} else if role != "" {
			d = nodejoin.ReadConsoleOf(string(text), nodejoin.Identity{RoleARN: role, ClusterName: p.clusterName})
		}
	}
	if d.Message == "" {
		d.Message = fmt.Sprintf("Instance %s is running; its console shows no error", id)
	}
	return d, nil
}

// RoleReader reads the role in an instance profile.
type RoleReader interface {
	// RoleOfInstanceProfile returns the ARN (as IAM gives it, path included) of the role in the
	// instance profile of that ARN, or "" when it holds none.
	RoleOfInstanceProfile(ctx context.Context, profileARN string) (string, error)
}

// WithRoleReader makes Diagnose name the instance's node role, read through roles, when its
// kubelet is refused for that role: the fix then names the ARN to map rather than a template.
func (p *Provider) WithRoleReader(roles RoleReader) *Provider {
	p.roles = roles
	return p
}

// gone is the certain diagnosis of an instance that stopped or terminated before joining.
func gone(id, why string) cloudprovider.Diagnosis {
	return cloudprovider.Diagnosis{Certain: true, InstanceOnly: true, Reason: cloudprovider.ReasonInstanceTerminated, Evidence: why,
		Message: fmt.Sprintf("Instance %s stopped before its Node joined: %s. Look at the instance's state reason and the account's events "+
			"(spot interruption, a user or another tool terminating it, an EBS or KMS failure at boot)", id, why)}
}

// notListed is the uncertain diagnosis of an instance DescribeInstances does not list (yet).
func notListed(id string) cloudprovider.Diagnosis {
	return cloudprovider.Diagnosis{Message: fmt.Sprintf("Instance %s is not listed by DescribeInstances yet (EC2 lists new instances "+
		"after a delay), or no longer", id)}
}
