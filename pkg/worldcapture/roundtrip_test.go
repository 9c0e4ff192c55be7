package worldcapture_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	gocmp "github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu"
	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

// emulator serves the world in an emulator over HTTP and returns SDK clients signing as
// accessKey (authz.AdminAccessKey, or the world's controller key).
func emulator(t *testing.T, f *world.File, accessKey string) worldcapture.AWS {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st, err := awsemu.NewState(clk, f.SeedOptions(state.DefaultSeed()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awsemu.New(st, clk))
	t.Cleanup(srv.Close)
	return worldcapture.NewAWS(aws.Config{
		Region: f.Cluster.Region, BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, "secret", ""),
		HTTPClient:  &http.Client{Transport: plainBodies{}},
	})
}

// plainBodies hides io.WriterTo on request bodies (see pkg/aws/sdk.PlainBodies).
type plainBodies struct{}

func (plainBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// captureOptions are the --no-cluster options an operator would give for the world: its node
// roles, controller role and queue.
func captureOptions(f *world.File) worldcapture.Options {
	o := worldcapture.Options{ClusterName: f.Cluster.Name, Region: f.Cluster.Region, ControllerRole: f.ControllerRole,
		InterruptionQueue: f.Cluster.InterruptionQueue}
	for _, nr := range nodeRolesOf(f) {
		o.NodeRoles = append(o.NodeRoles, nr.Name)
	}
	return o
}

// captureWorld captures the emulator's world and decodes the written file as the emulator would.
func captureWorld(t *testing.T, api worldcapture.AWS, o worldcapture.Options, cat *catalog.Catalog) (*world.File, []worldcapture.Note) {
	t.Helper()
	res, err := worldcapture.Capture(t.Context(), api, o)
	if err != nil {
		t.Fatal(err)
	}
	data, err := worldcapture.Marshal(res.World)
	if err != nil {
		t.Fatal(err)
	}
	got, err := world.Decode(data, cat)
	if err != nil {
		t.Fatalf("the captured world is refused: %v\n%s", err, data)
	}
	return got, res.Notes
}

func TestCaptureRoundTrip(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	worlds := map[string][]byte{}
	paths, err := filepath.Glob("../../test/scenarios/*.world.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenario worlds (%v)", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		worlds[filepath.Base(p)] = b
	}
	for seed := range uint64(12) {
		worlds[fmt.Sprintf("generated-%02d", seed)] = generate(t, seed)
	}
	for name, data := range worlds {
		t.Run(name, func(t *testing.T) {
			want, err := world.Decode(data, cat)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			api := emulator(t, want, authz.AdminAccessKey)
			got, _ := captureWorld(t, api, captureOptions(want), cat)
			normalise(want, got)
			normalise(got, got)
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("captured world differs (-seeded +captured):\n%s", diff)
			}
			// The capture seeds the same world again: capturing it gives it back as it is.
			again, _ := captureWorld(t, emulator(t, got, authz.AdminAccessKey), captureOptions(got), cat)
			normalise(again, again)
			if diff := gocmp.Diff(got, again); diff != "" {
				t.Errorf("the capture of the captured world differs (-first +second):\n%s", diff)
			}
		})
	}
}

// normalise brings f to the form a capture of it has, given got, the capture: the defaults Decode
// leaves implicit filled in, the values the emulator generates for what f leaves out taken from
// got, each list in a fixed order, and what a capture never writes (the controller's access key)
// cleared.
func normalise(f, got *world.File) {
	cl := &f.Cluster
	if cl.VPCID == "" {
		cl.VPCID = got.Cluster.VPCID
	}
	if cl.VPCCIDR == "" {
		cl.VPCCIDR = got.Cluster.VPCCIDR
	}
	f.ControllerAccessKeyID = ""
	policy := string(f.ControllerPolicy)
	if policy == "" {
		policy = state.AllowAllPolicy
	}
	var doc any
	_ = json.Unmarshal([]byte(policy), &doc)
	f.ControllerPolicy, _ = json.Marshal(doc)
	roles := nodeRolesOf(f)
	if f.InstanceProfiles == nil {
		f.InstanceProfiles = []world.InstanceProfile{}
		if len(roles) > 0 {
			f.InstanceProfiles = append(f.InstanceProfiles, world.InstanceProfile{InstanceProfileName: roles[0].Name, Path: "/", Roles: []string{roleARN(f, roles[0])}})
		}
	}
	for i := range f.InstanceProfiles {
		p := &f.InstanceProfiles[i]
		if m := strings.Split(p.ARN, ":instance-profile"); len(m) == 2 {
			p.Path, p.InstanceProfileName = m[1][:strings.LastIndex(m[1], "/")+1], m[1][strings.LastIndex(m[1], "/")+1:]
		}
		p.ARN, p.Path = "", cmp.Or(p.Path, "/")
		if len(p.Tags) == 0 {
			p.Tags = nil
		}
	}
	slices.SortFunc(f.InstanceProfiles, func(a, b world.InstanceProfile) int {
		return strings.Compare(a.InstanceProfileName, b.InstanceProfileName)
	})
	if f.AccessEntries == nil {
		f.AccessEntries = []world.AccessEntry{}
		for _, nr := range roles {
			f.AccessEntries = append(f.AccessEntries, world.AccessEntry{ClusterName: cl.Name, PrincipalARN: roleARN(f, nr), Type: "EC2_LINUX"})
		}
	}
	for i := range f.AccessEntries {
		e := &f.AccessEntries[i]
		if e.AccessEntryARN == "" {
			for _, g := range got.AccessEntries {
				if g.PrincipalARN == e.PrincipalARN {
					e.AccessEntryARN = g.AccessEntryARN
				}
			}
		}
	}
	slices.SortFunc(f.AccessEntries, func(a, b world.AccessEntry) int { return strings.Compare(a.PrincipalARN, b.PrincipalARN) })
	f.NodeRoles = roles
	if f.Subnets == nil {
		f.Subnets = got.Subnets
	}
	for i := range f.Subnets {
		s := &f.Subnets[i]
		s.VPCID = ""
		if s.AvailableIPAddressCount == nil {
			n := int32(1)<<(32-netip.MustParsePrefix(s.CIDRBlock).Bits()) - 5
			s.AvailableIPAddressCount = &n
		}
	}
	slices.SortFunc(f.Subnets, func(a, b world.Subnet) int { return strings.Compare(a.SubnetID, b.SubnetID) })
	if f.SecurityGroups == nil {
		f.SecurityGroups = got.SecurityGroups
	}
	for i := range f.SecurityGroups {
		g := &f.SecurityGroups[i]
		g.VPCID, g.GroupName = "", cmp.Or(g.GroupName, g.GroupID)
	}
	slices.SortFunc(f.SecurityGroups, func(a, b world.SecurityGroup) int { return strings.Compare(a.GroupID, b.GroupID) })
	normaliseImages(f)
}

// normaliseImages fills in the defaults of the images' fields and sorts them.
func normaliseImages(f *world.File) {
	cl := f.Cluster
	if f.Images == nil {
		f.Images = []world.Image{}
	}
	for i := range f.Images {
		img := &f.Images[i]
		img.OwnerID = cmp.Or(img.OwnerID, cl.AccountID)
		img.State = cmp.Or(img.State, "available")
		created, err := time.Parse(time.RFC3339, cmp.Or(img.CreationDate, "2025-01-01T00:00:00Z"))
		if err == nil {
			img.CreationDate = created.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		img.RootDeviceName = cmp.Or(img.RootDeviceName, "/dev/xvda")
		img.RootDeviceType = cmp.Or(img.RootDeviceType, "ebs")
		img.VirtualizationType = cmp.Or(img.VirtualizationType, "hvm")
		img.PlatformDetails = cmp.Or(img.PlatformDetails, "Linux/UNIX")
		img.KubernetesVersion = cmp.Or(img.KubernetesVersion, cl.KubernetesVersion)
	}
	slices.SortFunc(f.Images, func(a, b world.Image) int { return strings.Compare(a.ImageID, b.ImageID) })
}

// nodeRolesOf are the world's node roles, the demo's when it lists none, each by name and path
// with its defaults filled in, sorted by name.
func nodeRolesOf(f *world.File) []world.NodeRole {
	roles := f.NodeRoles
	if roles == nil {
		roles = []world.NodeRole{{Name: "KarpenterNodeRole-" + f.Cluster.Name}}
	}
	out := []world.NodeRole{}
	for _, nr := range roles {
		if nr.ARN != "" {
			rest := nr.ARN[strings.Index(nr.ARN, ":role/")+len(":role"):]
			nr.Path, nr.Name = rest[:strings.LastIndex(rest, "/")+1], rest[strings.LastIndex(rest, "/")+1:]
		}
		nr.ARN, nr.Path = "", cmp.Or(nr.Path, "/")
		nr.AssumeRolePolicyPrincipal = cmp.Or(nr.AssumeRolePolicyPrincipal, "ec2.amazonaws.com")
		if len(nr.ManagedPolicies) == 0 {
			nr.ManagedPolicies = nil
		}
		out = append(out, nr)
	}
	slices.SortFunc(out, func(a, b world.NodeRole) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// generateNetwork adds subnets of the VPC 10.second.0.0/16 in zones, and security groups.
func generateNetwork(r *rand.Rand, f *world.File, zones []string, second int, hex func(int) string) {
	for i := range 1 + r.IntN(6) {
		s := world.Subnet{SubnetID: "subnet-" + hex(17), AvailabilityZone: f.Cluster.Region + zones[r.IntN(len(zones))],
			CIDRBlock: fmt.Sprintf("10.%d.%d.0/20", second, i*16), MapPublicIPOnLaunch: r.IntN(3) == 0,
			Tags: map[string]string{"Name": fmt.Sprintf("%s-%d", f.Cluster.Name, i)}}
		if r.IntN(2) == 0 {
			s.Tags["karpenter.sh/discovery"] = f.Cluster.Name
		}
		if r.IntN(2) == 0 {
			n := int32(r.IntN(4091))
			s.AvailableIPAddressCount = &n
		}
		f.Subnets = append(f.Subnets, s)
	}
	for i := range 1 + r.IntN(3) {
		g := world.SecurityGroup{GroupID: "sg-" + hex(17), GroupName: fmt.Sprintf("%s-group-%d", f.Cluster.Name, i), Description: "group " + hex(4)}
		if r.IntN(2) == 0 {
			g.Tags = map[string]string{"karpenter.sh/discovery": f.Cluster.Name}
		}
		f.SecurityGroups = append(f.SecurityGroups, g)
	}
}

func roleARN(f *world.File, nr world.NodeRole) string {
	return fmt.Sprintf("arn:aws:iam::%s:role%s%s", f.Cluster.AccountID, cmp.Or(nr.Path, "/"), nr.Name)
}

// generate is a world within the rules, drawn from seed: a region, a VPC with subnets in its
// zones, security groups, node roles with paths and policies, instance profiles, access entries
// of every kind the world allows, custom images and a controller policy.
func generate(t *testing.T, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	regions := map[string][]string{"us-west-2": {"a", "b", "c", "d"}, "eu-west-1": {"a", "b", "c"}, "us-east-1": {"a", "b", "c", "d", "e", "f"}}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range regions {
			if !yield(k) {
				return
			}
		}
	})
	region := names[r.IntN(len(names))]
	account := fmt.Sprintf("%012d", r.Uint64N(1e12))
	cluster := fmt.Sprintf("gen%d-%s", seed, []string{"prod", "stage", "batch"}[r.IntN(3)])
	second := 16 + r.IntN(200)
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	f := world.File{Cluster: world.Cluster{
		Name: cluster, AccountID: account, Region: region, KubernetesVersion: []string{"1.30", "1.31", "1.32"}[r.IntN(3)],
		AuthenticationMode: []string{"API", "API_AND_CONFIG_MAP"}[r.IntN(2)], ServiceIPv4CIDR: fmt.Sprintf("172.%d.0.0/16", 16+r.IntN(16)),
		VPCID: "vpc-" + hex(17), VPCCIDR: fmt.Sprintf("10.%d.0.0/16", second), InterruptionQueue: cluster + "-interruptions",
	}}
	f.ControllerRole = fmt.Sprintf("arn:aws:iam::%s:role/%sKarpenterControllerRole-%s", account, []string{"", "platform/", "a/b/"}[r.IntN(3)], cluster)
	actions := []string{"ec2:DescribeSubnets", "ec2:DescribeImages", "ec2:RunInstances", "iam:PassRole", "eks:DescribeCluster", "ssm:GetParameter"}
	r.Shuffle(len(actions), func(i, j int) { actions[i], actions[j] = actions[j], actions[i] })
	f.ControllerPolicy, _ = json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Sid": "Reads", "Effect": "Allow", "Action": actions[:1+r.IntN(len(actions))], "Resource": "*"},
		map[string]any{"Effect": "Deny", "Action": "ec2:TerminateInstances", "Resource": "*",
			"Condition": map[string]any{"StringNotEquals": map[string]string{"aws:ResourceTag/kubernetes.io/cluster/" + cluster: "owned"}}},
	}})
	managed := []string{"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
		"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly", "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"}
	for i := range 1 + r.IntN(3) {
		nr := world.NodeRole{Name: fmt.Sprintf("NodeRole%d-%s", i, cluster), ManagedPolicies: managed[:r.IntN(len(managed)+1)]}
		if r.IntN(2) == 0 {
			nr.Path = "/nodes/"
		}
		if r.IntN(3) == 0 {
			nr.AssumeRolePolicyPrincipal = "arn:aws:iam::" + account + ":root"
		}
		f.NodeRoles = append(f.NodeRoles, nr)
		arn := roleARN(&f, nr)
		if r.IntN(2) == 0 {
			ip := world.InstanceProfile{InstanceProfileName: fmt.Sprintf("Profile%d-%s", i, cluster), Roles: []string{arn}}
			if r.IntN(2) == 0 {
				ip.Path, ip.Tags = "/profiles/", map[string]string{"team": fmt.Sprintf("t%d", r.IntN(9))}
			}
			f.InstanceProfiles = append(f.InstanceProfiles, ip)
		}
		if r.IntN(4) != 0 {
			f.AccessEntries = append(f.AccessEntries, world.AccessEntry{PrincipalARN: arn, Type: []string{"EC2_LINUX", "EC2_WINDOWS"}[r.IntN(2)]})
		}
	}
	if f.InstanceProfiles == nil {
		f.InstanceProfiles = []world.InstanceProfile{}
	}
	if r.IntN(2) == 0 {
		e := world.AccessEntry{PrincipalARN: f.ControllerRole, Type: "STANDARD", Tags: map[string]string{"owner": "platform"}}
		if r.IntN(2) == 0 {
			e.Username, e.KubernetesGroups = "karpenter", []string{"karpenter-readers"}
		}
		e.AccessPolicies = []world.AccessPolicy{{PolicyARN: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy",
			AccessScope: world.AccessScope{Type: "namespace", Namespaces: []string{"kube-system", "karpenter"}}}}
		f.AccessEntries = append(f.AccessEntries, e)
	}
	for i := range r.IntN(3) {
		f.AccessEntries = append(f.AccessEntries, world.AccessEntry{PrincipalARN: fmt.Sprintf("arn:aws:iam::%s:user/admin%d", account, i),
			Username: fmt.Sprintf("admin%d", i), AccessPolicies: []world.AccessPolicy{{
				PolicyARN: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy", AccessScope: world.AccessScope{Type: "cluster"}}}})
	}
	if f.AccessEntries == nil {
		f.AccessEntries = []world.AccessEntry{}
	}
	generateNetwork(r, &f, regions[region], second, hex)
	boots := []struct{ bootstrap, name string }{{world.BootstrapAL2, "al2"}, {world.BootstrapNodeadm, "al2023"}, {world.BootstrapBottlerocket, "bottlerocket"}}
	for i := range r.IntN(3) {
		b := boots[r.IntN(len(boots))]
		img := world.Image{ImageID: "ami-" + hex(17), Architecture: []string{"x86_64", "arm64"}[r.IntN(2)], Bootstrap: b.bootstrap,
			KubernetesVersion: f.Cluster.KubernetesVersion, CreationDate: fmt.Sprintf("2025-0%d-01T00:00:00.000Z", 1+r.IntN(9))}
		img.Name = fmt.Sprintf("%s-%s-%s-%d", cluster, b.name, img.KubernetesVersion, i)
		f.Images = append(f.Images, img)
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
