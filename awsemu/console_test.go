package awsemu_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/kubelets"
	"github.com/joinerhq/joiner/awsemu/state"
)

const (
	controllerRoleName = "JoinerControllerRole"
	nodeRoleARN        = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
)

// admin is the administrator's clients: the person fixing the account from the console or CLI.
type admin struct {
	iam *iam.Client
	eks *eks.Client
	sts *sts.Client
}

func (e *env) admin(t *testing.T, region string) admin {
	t.Helper()
	cfg := e.config(t, region, authz.AdminAccessKey)
	return admin{iam: iam.NewFromConfig(cfg), eks: eks.NewFromConfig(cfg), sts: sts.NewFromConfig(cfg)}
}

func TestAdminIsAllowedEverything(t *testing.T) {
	e := newEnv(t)
	// Even a world whose roles all deny everything leaves the administrator in.
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"*","Resource":"*"}]}`)
	a := e.admin(t, e.region)
	id, err := a.sts.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if *id.Arn != "arn:aws:sts::111122223333:assumed-role/JoinerAdmin/AKIDJOINERADMIN" {
		t.Errorf("admin is %s", *id.Arn)
	}
	if _, err := a.eks.DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("demo")}); err != nil {
		t.Error(err)
	}
	if _, err := ec2.NewFromConfig(e.config(t, "eu-west-1", authz.AdminAccessKey)).DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{}); err != nil {
		t.Error(err)
	}
	_, err = a.iam.GetRole(t.Context(), &iam.GetRoleInput{RoleName: aws.String("JoinerAdmin")})
	wantCode(t, err, "NoSuchEntity", "the admin's role is none of the world's")
}

// TestRoleWritesRoundTrip creates a role, writes its inline and managed policies and reads
// them back through the SDK, with IAM's errors for what IAM refuses.
func TestRoleWritesRoundTrip(t *testing.T) {
	e := newEnv(t)
	a := e.admin(t, "us-east-1")
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	createRoleRoundTrip(t, a, trust)
	doc := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}]}`
	policyRoundTrip(t, a, doc)

	refuseRoleWrites(t, e, a, trust, doc)
}

// describeSubnets is the controller's DescribeSubnets in the region, returning the error.
func (e *env) describeSubnets(t *testing.T, region string) error {
	_, err := ec2.NewFromConfig(e.config(t, region, state.DefaultSeed().ControllerAccessKey)).DescribeSubnets(t.Context(), &ec2.DescribeSubnetsInput{})
	return err
}

// TestPutRolePolicyEnforcedOnTheNextCall: the administrator replaces the controller's policy
// with iam:PutRolePolicy, and the controller's very next call is decided by the new document.
func TestPutRolePolicyEnforcedOnTheNextCall(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.admin(t, "us-east-1")
	put := func(doc string) {
		t.Helper()
		if _, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(controllerRoleName),
			PolicyName: aws.String("JoinerControllerPolicy"), PolicyDocument: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	put(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeSubnets","Resource":"*"}]}`)
	// The controller's policy is JoinerControllerPolicy alone: the administrator removes the others.
	names, err := a.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String(controllerRoleName)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names.PolicyNames {
		if n != "JoinerControllerPolicy" {
			if _, err := a.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(controllerRoleName), PolicyName: aws.String(n)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.describeSubnets(t, "us-west-2"); err != nil {
		t.Fatalf("allowed call: %v", err)
	}
	_, err = e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{})
	wantCode(t, err, "UnauthorizedOperation", "a call the policy does not allow")

	// Replacing the document takes the old one away and gives the new one at once.
	put(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeSecurityGroups","Resource":"*"}]}`)
	if _, err := e.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{}); err != nil {
		t.Errorf("the next call after the new policy: %v", err)
	}
	wantCode(t, e.describeSubnets(t, "us-west-2"), "UnauthorizedOperation", "a call only the replaced policy allowed")

	// aws:RequestedRegion is the region the call is signed for.
	put(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*","Condition":{"StringEquals":{"aws:RequestedRegion":["us-east-1","eu-west-1"]}}}]}`)
	for region, allowed := range map[string]bool{"us-east-1": true, "eu-west-1": true, "us-west-2": false} {
		if err := e.describeSubnets(t, region); (err == nil) != allowed {
			t.Errorf("DescribeSubnets in %s: %v, want allowed %v", region, err, allowed)
		}
	}

	// A managed policy attached to the role counts like an inline one.
	if _, err := a.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(controllerRoleName), PolicyName: aws.String("JoinerControllerPolicy")}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.describeSubnets(t, "us-east-1"), "UnauthorizedOperation", "no policy left")
	if _, err := a.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(controllerRoleName), PolicyArn: aws.String("arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy")}); err != nil {
		t.Fatal(err)
	}
	if err := e.describeSubnets(t, "us-east-1"); err != nil {
		t.Errorf("allowed by AmazonEKSWorkerNodePolicy: %v", err)
	}
	_, err = e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
	wantCode(t, err, "UnauthorizedOperation", "not in AmazonEKSWorkerNodePolicy")
}

// TestAccessEntryWrites round-trips access entries and their access policies through the SDK
// and checks what EKS refuses.
func TestAccessEntryWrites(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.admin(t, e.region)
	trust := `{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	for _, in := range []*iam.CreateRoleInput{
		{RoleName: aws.String("Ops"), AssumeRolePolicyDocument: aws.String(trust)},
		{RoleName: aws.String("GPUNodes"), Path: aws.String("/nodes/"), AssumeRolePolicyDocument: aws.String(trust)},
	} {
		if _, err := a.iam.CreateRole(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	const ops = "arn:aws:iam::111122223333:role/Ops"
	cluster := aws.String("demo")
	standardEntryRoundTrip(t, e, a, ops)
	// A node role with a path: the entry may name it with or without the path.
	gpu, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/nodes/GPUNodes"), Type: aws.String("EC2_LINUX")})
	if err != nil {
		t.Fatal(err)
	}
	if *gpu.AccessEntry.Username != "system:node:{{EC2PrivateDNSName}}" || !slices.Equal(gpu.AccessEntry.KubernetesGroups, []string{"system:nodes"}) {
		t.Errorf("EC2_LINUX entry: %+v", gpu.AccessEntry)
	}

	refuseEntryWrites(t, e, a, ops)

	if _, err := a.eks.DisassociateAccessPolicy(ctx, &eks.DisassociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
		PolicyArn: aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy")}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eks.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops)}); err != nil {
		t.Fatal(err)
	}
	_, err = a.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops)})
	wantCode(t, err, "ResourceNotFoundException", "a deleted entry")
	_, err = a.eks.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops)})
	wantCode(t, err, "ResourceNotFoundException", "deleting it again")

	// A CONFIG_MAP cluster has no access entries to manage.
	_ = e.state.Update(func(w *state.World) error {
		w.Regions[e.region].Clusters["demo"].AuthenticationMode = "CONFIG_MAP"
		return nil
	})
	_, err = a.eks.ListAccessEntries(ctx, &eks.ListAccessEntriesInput{ClusterName: cluster})
	wantCode(t, err, "InvalidRequestException", "access entries of a CONFIG_MAP cluster")
}

// TestCreateAccessEntryLetsARefusedKubeletJoin: a kubelet whose role nothing maps is refused
// (401); a STANDARD entry makes it known without node rights (403, as the console shows); the
// administrator replaces it with an EC2_LINUX entry and the kubelet's next retry joins.
func TestCreateAccessEntryLetsARefusedKubeletJoin(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	ctx := t.Context()
	a := e.admin(t, e.region)
	cluster := aws.String("demo")
	if _, err := a.eks.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN)}); err != nil {
		t.Fatal(err)
	}
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, "/etc/eks/bootstrap.sh demo")
	e.boot(t)
	if i := e.instance(id); i.BootReason != boot.ReasonUnauthorized || i.BootRetryAt == nil || !strings.Contains(e.console(t, id), `err="Unauthorized"`) {
		t.Fatalf("unmapped: reason %q retry at %v\n%s", i.BootReason, i.BootRetryAt, e.console(t, id))
	}
	retry := func() state.Instance {
		t.Helper()
		e.clock.Step(kubelets.RegisterRetryEvery)
		if err := e.kubelets.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		return e.instance(id)
	}

	if _, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN), KubernetesGroups: []string{"nodes"}}); err != nil {
		t.Fatal(err)
	}
	if i := retry(); i.BootReason != boot.ReasonForbidden || i.BootRetryAt == nil ||
		!strings.Contains(e.console(t, id), `nodes is forbidden: User \"arn:aws:sts::111122223333:assumed-role/KarpenterNodeRole-demo/`+id+`\" cannot create resource`) {
		t.Fatalf("STANDARD entry: reason %q retry at %v\n%s", i.BootReason, i.BootRetryAt, e.console(t, id))
	}

	if _, err := a.eks.DeleteAccessEntry(ctx, &eks.DeleteAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN), Type: aws.String("EC2_LINUX")}); err != nil {
		t.Fatal(err)
	}
	if i := retry(); i.BootPhase != state.BootJoined || e.registered(id) == nil {
		t.Errorf("after CreateAccessEntry: phase %q reason %q\n%s", i.BootPhase, i.BootReason, e.console(t, id))
	}
}

// TestAuthenticationModes: which of aws-auth and access entries let a kubelet in depends on the
// cluster's authentication mode, and an entry wins over aws-auth.
func TestAuthenticationModes(t *testing.T) {
	mapping := "- rolearn: " + nodeRoleARN + "\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
	withPath := "- rolearn: arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo\n  username: system:node:{{EC2PrivateDNSName}}\n  groups: [system:bootstrappers, system:nodes]\n"
	tests := []struct {
		name, mode, mapRoles, entry string
		want                        string // "" joined, else the boot reason
	}{
		{"CONFIG_MAP: aws-auth maps", "CONFIG_MAP", mapping, "", ""},
		{"CONFIG_MAP: an entry is not read", "CONFIG_MAP", "", "EC2_LINUX", boot.ReasonUnauthorized},
		{"API: an entry maps", "API", "", "EC2_LINUX", ""},
		{"API: aws-auth is not read", "API", mapping, "", boot.ReasonUnauthorized},
		{"API_AND_CONFIG_MAP: aws-auth maps", "API_AND_CONFIG_MAP", mapping, "", ""},
		{"API_AND_CONFIG_MAP: an entry maps", "API_AND_CONFIG_MAP", "", "EC2_WINDOWS", ""},
		{"API_AND_CONFIG_MAP: the entry wins", "API_AND_CONFIG_MAP", mapping, "STANDARD", boot.ReasonForbidden},
		{"a HYBRID_LINUX entry gives no EC2 node identity", "API", "", "HYBRID_LINUX", boot.ReasonForbidden},
		{"an aws-auth rolearn with a path never matches", "CONFIG_MAP", withPath, "", boot.ReasonUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			f := e.fixture(t)
			_ = e.state.Update(func(w *state.World) error {
				r := w.Regions[e.region]
				c := r.Clusters["demo"]
				c.AuthenticationMode, c.AccessEntries = tt.mode, map[string]*state.AccessEntry{}
				if tt.entry != "" {
					w.PutAccessEntry(r, c, nodeRoleARN, tt.entry)
				}
				return nil
			})
			e.api.ConfigMapFound, e.api.MapRoles = tt.mapRoles != "", tt.mapRoles
			id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, "/etc/eks/bootstrap.sh demo")
			e.boot(t)
			i := e.instance(id)
			if (i.BootPhase == state.BootJoined) != (tt.want == "") || i.BootReason != tt.want {
				t.Errorf("phase %q reason %q, want reason %q\n%s", i.BootPhase, i.BootReason, tt.want, e.console(t, id))
			}
		})
	}
}

// TestRoleAddedToAnEmptyProfileLetsTheKubeletJoin: an instance launched with an instance profile
// that holds no role has no credentials, so its kubelet is refused and retries; once the role is
// added to the profile, the next retry authenticates with it.
func TestRoleAddedToAnEmptyProfileLetsTheKubeletJoin(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	ctx := t.Context()
	a := e.admin(t, e.region)
	if _, err := a.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("empty")}); err != nil {
		t.Fatal(err)
	}
	al2, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{
		{Name: aws.String("name"), Values: []string{"amazon-eks-node-1.31-v20251101"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.ec2.RunInstances(ctx, &ec2.RunInstancesInput{
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: al2.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM5Large,
		IamInstanceProfile: &ec2types.IamInstanceProfileSpecification{Name: aws.String("empty")}, SubnetId: aws.String(f.subnets[e.zone("a")]),
		UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\n/etc/eks/bootstrap.sh demo\n"))),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	e.boot(t)
	if i := e.instance(id); i.BootReason != boot.ReasonUnauthorized || i.BootRetryAt == nil || !strings.Contains(e.console(t, id), "NoCredentialProviders") {
		t.Fatalf("no role: reason %q retry at %v\n%s", i.BootReason, i.BootRetryAt, e.console(t, id))
	}
	if _, err := a.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("empty"), RoleName: aws.String("KarpenterNodeRole-demo")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(kubelets.RegisterRetryEvery)
	if err := e.kubelets.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if i := e.instance(id); i.BootPhase != state.BootJoined {
		t.Errorf("after AddRoleToInstanceProfile: phase %q reason %q\n%s", i.BootPhase, i.BootReason, e.console(t, id))
	}
}

// TestUpdateAccessEntryKeepsTheType: UpdateAccessEntry has no type member; a request that sends
// one anyway (a hand-written call, an old CLI) is refused rather than ignored, naming the fix.
func TestUpdateAccessEntryKeepsTheType(t *testing.T) {
	e := newEnv(t)
	body := `{"type":"STANDARD","kubernetesGroups":["ops"]}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
		e.url+"/clusters/demo/access-entries/"+url.PathEscape(nodeRoleARN), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: authz.AdminAccessKey, SecretAccessKey: "secret"}
	if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, hex.EncodeToString(sum[:]), "eks", e.region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-ErrorType") != "InvalidParameterException" ||
		!strings.Contains(string(out), "Delete the access entry and create it again") {
		t.Errorf("changing the type: %d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), out)
	}
}

// TestUpdateAuthenticationMode: the authentication mode changes one way, one step at a time, and
// the kubelets read the new mode at their next attempt.
func TestUpdateAuthenticationMode(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	ctx := t.Context()
	a := e.admin(t, e.region)
	_ = e.state.Update(func(w *state.World) error {
		w.Regions[e.region].Clusters["demo"].AuthenticationMode = "CONFIG_MAP"
		return nil
	})
	id := e.runAL2(t, f.subnets[e.zone("a")], ec2types.InstanceTypeT3Medium, "/etc/eks/bootstrap.sh demo")
	e.boot(t)
	if i := e.instance(id); i.BootReason != boot.ReasonUnauthorized {
		t.Fatalf("CONFIG_MAP without aws-auth: reason %q", i.BootReason)
	}
	update := func(mode string) error {
		_, err := a.eks.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String("demo"),
			AccessConfig: &ekstypes.UpdateAccessConfigRequest{AuthenticationMode: ekstypes.AuthenticationMode(mode)}})
		return err
	}
	wantCode(t, update("API"), "InvalidParameterException", "CONFIG_MAP to API in one step")
	if err := update("API_AND_CONFIG_MAP"); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(kubelets.RegisterRetryEvery)
	if err := e.kubelets.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if i := e.instance(id); i.BootPhase != state.BootJoined {
		t.Errorf("the node role's access entry applies once the mode reads entries: phase %q reason %q", i.BootPhase, i.BootReason)
	}
	if err := update("API"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, update("API_AND_CONFIG_MAP"), "InvalidParameterException", "back from API")
	cluster, err := a.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if cluster.Cluster.AccessConfig.AuthenticationMode != "API" {
		t.Errorf("mode %s", cluster.Cluster.AccessConfig.AuthenticationMode)
	}
}

// TestAddRoleToInstanceProfilePassesTheRoleToEC2: adding a role to an instance profile checks
// iam:PassRole with iam:PassedToService ec2.amazonaws.com, so Karpenter's controller policy
// (PassRole of the node role, to EC2 only) allows it for the node role and for no other.
func TestAddRoleToInstanceProfilePassesTheRoleToEC2(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.admin(t, e.region)
	if _, err := a.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("BatchNodes"),
		AssumeRolePolicyDocument: aws.String(`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		t.Fatal(err)
	}
	e.setControllerPolicy(t, `{"Statement":[
	  {"Effect":"Allow","Action":["iam:CreateInstanceProfile","iam:AddRoleToInstanceProfile"],"Resource":"arn:aws:iam::111122223333:instance-profile/*"},
	  {"Effect":"Allow","Action":"iam:PassRole","Resource":"`+nodeRoleARN+`","Condition":{"StringEquals":{"iam:PassedToService":"ec2.amazonaws.com"}}}]}`)
	for _, p := range []string{"nodes", "batch"} {
		if _, err := e.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(p)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("nodes"), RoleName: aws.String("KarpenterNodeRole-demo")}); err != nil {
		t.Errorf("the node role: %v", err)
	}
	_, err := e.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("batch"), RoleName: aws.String("BatchNodes")})
	wantCode(t, err, "AccessDenied", "a role the policy does not let pass")
}

// refuseRoleWrites checks what IAM refuses of the role writes, with its error codes.
func refuseRoleWrites(t *testing.T, e *env, a admin, trust, doc string) {
	ctx := t.Context()
	refusals := []struct {
		name, code string
		call       func() error
	}{
		{"role exists", "EntityAlreadyExists", func() error {
			_, err := a.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("noderole-PROD"), AssumeRolePolicyDocument: aws.String(trust)})
			return err
		}},
		{"trust policy with a resource", "MalformedPolicyDocument", func() error {
			_, err := a.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("Other"),
				AssumeRolePolicyDocument: aws.String(`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole","Resource":"*"}]}`)})
			return err
		}},
		{"path without a trailing slash", "ValidationError", func() error {
			_, err := a.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("Other"), Path: aws.String("/nodes"), AssumeRolePolicyDocument: aws.String(trust)})
			return err
		}},
		{"policy not JSON", "MalformedPolicyDocument", func() error {
			_, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("x"), PolicyDocument: aws.String("{")})
			return err
		}},
		{"policy without a resource", "MalformedPolicyDocument", func() error {
			_, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("x"),
				PolicyDocument: aws.String(`{"Statement":[{"Effect":"Allow","Action":"ec2:*"}]}`)})
			return err
		}},
		{"policy over the size quota", "LimitExceeded", func() error {
			big := `{"Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":[` + strings.Repeat(`"arn:aws:ec2:us-west-2:111122223333:instance/i-0123456789abcdef0",`, 200) + `"*"]}]}`
			_, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("x"), PolicyDocument: aws.String(big)})
			return err
		}},
		{"put on a missing role", "NoSuchEntity", func() error {
			_, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("Nobody"), PolicyName: aws.String("x"), PolicyDocument: aws.String(doc)})
			return err
		}},
		{"get a missing policy", "NoSuchEntity", func() error {
			_, err := a.iam.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("second")})
			return err
		}},
		{"delete a missing policy", "NoSuchEntity", func() error {
			_, err := a.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("second")})
			return err
		}},
		{"attach an unknown policy", "NoSuchEntity", func() error {
			_, err := a.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyArn: aws.String("arn:aws:iam::111122223333:policy/Nope")})
			return err
		}},
		{"attach a malformed ARN", "InvalidInput", func() error {
			_, err := a.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyArn: aws.String("AmazonEKSWorkerNodePolicy")})
			return err
		}},
		{"the controller may not write roles", "AccessDenied", func() error {
			_, err := e.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("x"), PolicyDocument: aws.String(doc)})
			return err
		}},
	}
	// The controller is allowed everything but IAM's role writes.
	e.setControllerPolicy(t, `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":["iam:PutRolePolicy","iam:CreateRole"],"Resource":"*"}]}`)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) { wantCode(t, r.call(), r.code, r.name) })
	}
}

// refuseEntryWrites checks what EKS refuses of the access entry writes, with its error codes.
func refuseEntryWrites(t *testing.T, e *env, a admin, ops string) {
	ctx := t.Context()
	cluster := aws.String("demo")
	refusals := []struct {
		name, code string
		call       func() error
	}{
		{"groups on an EC2_LINUX entry", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"),
				Type: aws.String("EC2_LINUX"), KubernetesGroups: []string{"system:nodes"}})
			return err
		}},
		{"username on an EC2_WINDOWS entry", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"),
				Type: aws.String("EC2_WINDOWS"), Username: aws.String("node")})
			return err
		}},
		{"unknown type", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"), Type: aws.String("EC2_MAC")})
			return err
		}},
		{"a role that does not exist", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/Nobody")})
			return err
		}},
		{"a node entry for a user", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:user/alice"), Type: aws.String("EC2_LINUX")})
			return err
		}},
		{"a reserved username", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"), Username: aws.String("system:admin")})
			return err
		}},
		{"system:masters", "InvalidParameterException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"), KubernetesGroups: []string{"system:masters"}})
			return err
		}},
		{"the same role twice, without its path", "ResourceInUseException", func() error {
			_, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/GPUNodes"), Type: aws.String("EC2_LINUX")})
			return err
		}},
		{"groups on an EC2_LINUX entry by update", "InvalidParameterException", func() error {
			_, err := a.eks.UpdateAccessEntry(ctx, &eks.UpdateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN), KubernetesGroups: []string{"ops"}})
			return err
		}},
		{"update a missing entry", "ResourceNotFoundException", func() error {
			_, err := a.eks.UpdateAccessEntry(ctx, &eks.UpdateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole"), Username: aws.String("x")})
			return err
		}},
		{"an access policy on an EC2_LINUX entry", "InvalidParameterException", func() error {
			_, err := a.eks.AssociateAccessPolicy(ctx, &eks.AssociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(nodeRoleARN),
				PolicyArn: aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"), AccessScope: &ekstypes.AccessScope{Type: ekstypes.AccessScopeTypeCluster}})
			return err
		}},
		{"a namespace scope without namespaces", "InvalidParameterException", func() error {
			_, err := a.eks.AssociateAccessPolicy(ctx, &eks.AssociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
				PolicyArn: aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy"), AccessScope: &ekstypes.AccessScope{Type: ekstypes.AccessScopeTypeNamespace}})
			return err
		}},
		{"an unknown access policy", "InvalidParameterException", func() error {
			_, err := a.eks.AssociateAccessPolicy(ctx, &eks.AssociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
				PolicyArn: aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSRootPolicy"), AccessScope: &ekstypes.AccessScope{Type: ekstypes.AccessScopeTypeCluster}})
			return err
		}},
		{"the controller may not create entries", "AccessDeniedException", func() error {
			_, err := eks.NewFromConfig(e.config(t, e.region, state.DefaultSeed().ControllerAccessKey)).CreateAccessEntry(ctx,
				&eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String("arn:aws:iam::111122223333:role/JoinerControllerRole")})
			return err
		}},
	}
	e.setControllerPolicy(t, `{"Statement":[{"Effect":"Allow","Action":"eks:Describe*","Resource":"*"}]}`)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) { wantCode(t, r.call(), r.code, r.name) })
	}
}

// createRoleRoundTrip creates the role NodeRole-prod with a path and reads it back.
func createRoleRoundTrip(t *testing.T, a admin, trust string) {
	t.Helper()
	ctx := t.Context()
	created, err := a.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("NodeRole-prod"), Path: aws.String("/nodes/"),
		AssumeRolePolicyDocument: aws.String(trust), Description: aws.String("nodes of prod"),
		Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("platform")}}})
	if err != nil {
		t.Fatal(err)
	}
	if *created.Role.Arn != "arn:aws:iam::111122223333:role/nodes/NodeRole-prod" || *created.Role.Path != "/nodes/" {
		t.Errorf("created %s at %s", *created.Role.Arn, *created.Role.Path)
	}
	got, err := a.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("NodeRole-prod")})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := url.QueryUnescape(*got.Role.AssumeRolePolicyDocument); doc != trust || *got.Role.Description != "nodes of prod" || len(got.Role.Tags) != 1 {
		t.Errorf("role read back: %+v (trust %s)", got.Role, doc)
	}
}

// policyRoundTrip writes inline and managed policies of NodeRole-prod and reads them back.
func policyRoundTrip(t *testing.T, a admin, doc string) {
	t.Helper()
	ctx := t.Context()
	if _, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("describe"), PolicyDocument: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	pol, err := a.iam.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("describe")})
	if err != nil {
		t.Fatal(err)
	}
	if back, _ := url.QueryUnescape(*pol.PolicyDocument); back != doc || *pol.RoleName != "NodeRole-prod" || *pol.PolicyName != "describe" {
		t.Errorf("policy read back %q", back)
	}
	for _, arn := range []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly", "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"} {
		if _, err := a.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyArn: aws.String(arn)}); err != nil {
			t.Fatal(err)
		}
	}
	attached, err := a.iam.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("NodeRole-prod")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range attached.AttachedPolicies {
		names = append(names, *p.PolicyName)
	}
	if !slices.Equal(names, []string{"AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryReadOnly"}) {
		t.Errorf("attached: %v", names)
	}
	if _, err := a.iam.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("second"), PolicyDocument: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	var listed []string
	p := iam.NewListRolePoliciesPaginator(a.iam, &iam.ListRolePoliciesInput{RoleName: aws.String("NodeRole-prod"), MaxItems: aws.Int32(1)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, page.PolicyNames...)
	}
	if !slices.Equal(listed, []string{"describe", "second"}) {
		t.Errorf("listed: %v", listed)
	}
	if _, err := a.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String("NodeRole-prod"), PolicyName: aws.String("second")}); err != nil {
		t.Fatal(err)
	}
}

// standardEntryRoundTrip creates, updates and describes a STANDARD entry for ops, and
// associates an access policy with it, through the SDK.
func standardEntryRoundTrip(t *testing.T, e *env, a admin, ops string) {
	t.Helper()
	ctx := t.Context()
	cluster := aws.String("demo")
	created, err := a.eks.CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
		KubernetesGroups: []string{"ops"}, Tags: map[string]string{"team": "platform"}})
	if err != nil {
		t.Fatal(err)
	}
	if ae := created.AccessEntry; *ae.Type != "STANDARD" || *ae.Username != "arn:aws:sts::111122223333:assumed-role/Ops/{{SessionName}}" ||
		!slices.Equal(ae.KubernetesGroups, []string{"ops"}) || !strings.HasPrefix(*ae.AccessEntryArn, "arn:aws:eks:"+e.region+":111122223333:access-entry/demo/role/111122223333/Ops/") {
		t.Errorf("created: %+v", ae)
	}
	updated, err := a.eks.UpdateAccessEntry(ctx, &eks.UpdateAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
		Username: aws.String("ops-admin"), KubernetesGroups: []string{"ops", "viewers"}})
	if err != nil {
		t.Fatal(err)
	}
	if *updated.AccessEntry.Username != "ops-admin" || len(updated.AccessEntry.KubernetesGroups) != 2 {
		t.Errorf("updated: %+v", updated.AccessEntry)
	}
	accessPolicyRoundTrip(t, a, ops)
	described, err := a.eks.DescribeAccessEntry(ctx, &eks.DescribeAccessEntryInput{ClusterName: cluster, PrincipalArn: aws.String(ops)})
	if err != nil {
		t.Fatal(err)
	}
	if *described.AccessEntry.Username != "ops-admin" || described.AccessEntry.Tags["team"] != "platform" {
		t.Errorf("described: %+v", described.AccessEntry)
	}
}

// accessPolicyRoundTrip associates an access policy with ops's entry, changes its scope and
// lists it, and lists the access policies there are.
func accessPolicyRoundTrip(t *testing.T, a admin, ops string) {
	t.Helper()
	ctx := t.Context()
	cluster := aws.String("demo")
	assoc, err := a.eks.AssociateAccessPolicy(ctx, &eks.AssociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
		PolicyArn:   aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"),
		AccessScope: &ekstypes.AccessScope{Type: ekstypes.AccessScopeTypeNamespace, Namespaces: []string{"default", "kube-system"}}})
	if err != nil {
		t.Fatal(err)
	}
	if *assoc.PrincipalArn != ops || assoc.AssociatedAccessPolicy.AccessScope.Type != ekstypes.AccessScopeTypeNamespace {
		t.Errorf("associated: %+v", assoc.AssociatedAccessPolicy)
	}
	// Associating it again changes its scope.
	if _, err := a.eks.AssociateAccessPolicy(ctx, &eks.AssociateAccessPolicyInput{ClusterName: cluster, PrincipalArn: aws.String(ops),
		PolicyArn: aws.String("arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"), AccessScope: &ekstypes.AccessScope{Type: ekstypes.AccessScopeTypeCluster}}); err != nil {
		t.Fatal(err)
	}
	policies, err := a.eks.ListAssociatedAccessPolicies(ctx, &eks.ListAssociatedAccessPoliciesInput{ClusterName: cluster, PrincipalArn: aws.String(ops)})
	if err != nil {
		t.Fatal(err)
	}
	if len(policies.AssociatedAccessPolicies) != 1 || policies.AssociatedAccessPolicies[0].AccessScope.Type != ekstypes.AccessScopeTypeCluster {
		t.Errorf("associated policies: %+v", policies.AssociatedAccessPolicies)
	}
	available, err := a.eks.ListAccessPolicies(ctx, &eks.ListAccessPoliciesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(available.AccessPolicies, func(p ekstypes.AccessPolicy) bool {
		return *p.Name == "AmazonEKSViewPolicy" && *p.Arn == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
	}) {
		t.Errorf("access policies: %+v", available.AccessPolicies)
	}
}
