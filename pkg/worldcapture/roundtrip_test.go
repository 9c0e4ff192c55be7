package worldcapture_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/worldcapture"
)

// emulator serves the world in an emulator over HTTP and returns SDK clients signing as
// accessKey (authz.AdminAccessKey, or the world's controller key).
func emulator(t *testing.T, f *world.File, accessKey string) worldcapture.AWS {
	t.Helper()
	e := emutest.Start(t, emutest.WithSeed(f.SeedOptions(state.DefaultSeed())), emutest.WithRegion(f.Cluster.Region),
		emutest.WithAccessKey(accessKey))
	return worldcapture.NewAWS(e.Config)
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
	// The worlds written as the AWS CLI prints the account, read-only fields and all.
	cli, err := filepath.Glob("../../awsemu/world/testdata/cli-*.world.yaml")
	if err != nil || len(cli) == 0 {
		t.Fatalf("no CLI-style worlds (%v)", err)
	}
	for _, p := range append(paths, cli...) {
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
// got, the principals the world creates implicitly listed, what EKS and IAM assign (read-only
// fields, the usernames and groups EKS gives by default) cleared, each list in a fixed order, and
// what a capture never writes (the controller's access key) cleared.
func normalise(f, got *world.File) {
	roles := nodeRolesOf(f)
	if f.NodeRoles != nil {
		// Seeding gives the first node role of the file, not of the sorted list, a profile.
		roles = nodeRolesOf(&world.File{Cluster: f.Cluster, NodeRoles: f.NodeRoles[:min(1, len(f.NodeRoles))]})
	}
	normalisePrincipals(f)
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
	f.ControllerPolicy = canonicalJSON(policy)
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
		p.InstanceProfileReadOnly = world.InstanceProfileReadOnly{}
		if len(p.Tags) == 0 {
			p.Tags = nil
		}
	}
	slices.SortFunc(f.InstanceProfiles, func(a, b world.InstanceProfile) int {
		return strings.Compare(a.InstanceProfileName, b.InstanceProfileName)
	})
	if f.AccessEntries == nil {
		f.AccessEntries = []world.AccessEntry{}
		for _, nr := range f.NodeRoles {
			f.AccessEntries = append(f.AccessEntries, world.AccessEntry{ClusterName: cl.Name, PrincipalARN: roleARN(f, nr), Type: "EC2_LINUX"})
		}
	}
	for i := range f.AccessEntries {
		normaliseEntry(&f.AccessEntries[i], got)
	}
	slices.SortFunc(f.AccessEntries, func(a, b world.AccessEntry) int { return strings.Compare(a.PrincipalARN, b.PrincipalARN) })
	if f.Subnets == nil {
		f.Subnets = got.Subnets
	}
	for i := range f.Subnets {
		s := &f.Subnets[i]
		s.VPCID, s.SubnetReadOnly = "", world.SubnetReadOnly{}
		if s.AvailableIPAddressCount == nil {
			n := int32(1)<<(32-netip.MustParsePrefix(s.CIDRBlock).Bits()) - 5
			s.AvailableIPAddressCount = &n
		}
		if len(s.Tags) == 0 {
			s.Tags = nil
		}
	}
	slices.SortFunc(f.Subnets, func(a, b world.Subnet) int { return strings.Compare(a.SubnetID, b.SubnetID) })
	if f.SecurityGroups == nil {
		f.SecurityGroups = got.SecurityGroups
	}
	for i := range f.SecurityGroups {
		g := &f.SecurityGroups[i]
		g.VPCID, g.GroupName, g.SecurityGroupReadOnly = "", cmp.Or(g.GroupName, g.GroupID), world.SecurityGroupReadOnly{}
		if len(g.Tags) == 0 {
			g.Tags = nil
		}
	}
	slices.SortFunc(f.SecurityGroups, func(a, b world.SecurityGroup) int { return strings.Compare(a.GroupID, b.GroupID) })
	normaliseImages(f)
}

// normaliseEntry clears what EKS assigns an entry (its read-only fields, a node type's username
// and groups, a STANDARD entry's default username) and takes the ARN the emulator generates for
// an entry that gives none from got.
func normaliseEntry(e *world.AccessEntry, got *world.File) {
	e.AccessEntryReadOnly = world.AccessEntryReadOnly{}
	if username, _ := state.DefaultAccessEntryIdentity(e.PrincipalARN, e.Type); e.Type != "STANDARD" || e.Username == username {
		e.Username = ""
	}
	if e.Type != "STANDARD" || len(e.KubernetesGroups) == 0 {
		e.KubernetesGroups = nil
	}
	if len(e.Tags) == 0 {
		e.Tags = nil
	}
	if len(e.AccessPolicies) == 0 {
		e.AccessPolicies = nil
	}
	if e.AccessEntryARN == "" {
		for _, g := range got.AccessEntries {
			if g.PrincipalARN == e.PrincipalARN {
				e.AccessEntryARN = g.AccessEntryARN
			}
		}
	}
}

// normalisePrincipals lists f's roles and users as seeding f creates them, the implicit ones too
// (the roles and users only an access entry names), each as a canonical entry: name and path, the
// trust policy as a document, the read-only fields cleared. The roles of EC2 node entries are
// node roles, as a capture finds them; the rest are in roles.
func normalisePrincipals(f *world.File) {
	seed := f.SeedOptions(state.DefaultSeed())
	nodes := map[string]bool{}
	for _, nr := range nodeRolesOf(f) {
		nodes[nr.Name] = true
	}
	for _, e := range f.AccessEntries {
		if e.Type == "EC2_LINUX" || e.Type == "EC2_WINDOWS" {
			nodes[e.PrincipalARN[strings.LastIndex(e.PrincipalARN, "/")+1:]] = true
		}
	}
	all := seed.NodeRoles
	if all == nil {
		all = []state.SeedRole{{Name: "KarpenterNodeRole-" + f.Cluster.Name}}
	}
	f.NodeRoles, f.Roles = []world.Role{}, nil
	for _, sr := range append(slices.Clone(all), seed.Roles...) {
		doc := cmp.Or(sr.AssumeRolePolicyDocument, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)
		r := world.Role{Name: sr.Name, Path: cmp.Or(sr.Path, "/"), AssumeRolePolicyDocument: canonicalJSON(doc), Description: sr.Description,
			ManagedPolicies: sr.ManagedPolicyARNs, Tags: sr.Tags}
		if len(r.ManagedPolicies) == 0 {
			r.ManagedPolicies = nil
		}
		if len(r.Tags) == 0 {
			r.Tags = nil
		}
		if nodes[r.Name] {
			f.NodeRoles = append(f.NodeRoles, r)
		} else {
			f.Roles = append(f.Roles, r)
		}
	}
	byName := func(a, b world.Role) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(f.NodeRoles, byName)
	slices.SortFunc(f.Roles, byName)
	f.Users = nil
	for _, su := range seed.Users {
		u := world.User{UserName: su.Name, Path: cmp.Or(su.Path, "/"), ManagedPolicies: su.ManagedPolicyARNs, Tags: su.Tags}
		if len(u.ManagedPolicies) == 0 {
			u.ManagedPolicies = nil
		}
		if len(u.Tags) == 0 {
			u.Tags = nil
		}
		f.Users = append(f.Users, u)
	}
	slices.SortFunc(f.Users, func(a, b world.User) int { return strings.Compare(a.UserName, b.UserName) })
}

// canonicalJSON is a JSON document with its keys sorted and no spaces.
func canonicalJSON(doc string) json.RawMessage {
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		return json.RawMessage(doc)
	}
	out, _ := json.Marshal(v)
	return out
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
// zones, security groups, node roles with paths and policies, instance profiles, the account's
// other roles and users, access entries of every kind the world allows, custom images and a
// controller policy.
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
			e := world.AccessEntry{PrincipalARN: arn, Type: []string{"EC2_LINUX", "EC2_WINDOWS"}[r.IntN(2)]}
			if e.Type == "EC2_LINUX" && r.IntN(2) == 0 {
				// As describe-access-entry prints it: EKS's username for the node type.
				e.Username = "system:node:{{EC2PrivateDNSName}}"
			}
			f.AccessEntries = append(f.AccessEntries, e)
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
	generatePrincipals(r, &f, hex)
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

// generatePrincipals adds the roles and users STANDARD access entries let in, listed (roles with
// paths, trust policies, policies, descriptions and tags; IAM Identity Center's roles at the
// global and the region-scoped reserved path; users with paths, policies and tags) or created
// with the world from their entry alone; another account's principals; and the roles of Fargate
// and hybrid node entries and of a managed node group, which the world creates.
func generatePrincipals(r *rand.Rand, f *world.File, hex func(int) string) {
	account := f.Cluster.AccountID
	policies := []string{"arn:aws:iam::aws:policy/ReadOnlyAccess", "arn:aws:iam::aws:policy/PowerUserAccess",
		"arn:aws:iam::" + account + ":policy/team/ClusterReaders"}
	generateRoles(r, f, policies, hex)
	generateSSORoles(r, f, policies, hex)
	for i := range r.IntN(4) {
		u := world.User{UserName: fmt.Sprintf("user%d-%s", i, hex(4)), Path: []string{"", "/", "/ops/"}[r.IntN(3)]}
		if r.IntN(2) == 0 {
			u.ManagedPolicies = policies[:1+r.IntN(len(policies))]
		}
		if r.IntN(2) == 0 {
			u.Tags = map[string]string{"team": hex(4)}
		}
		if r.IntN(3) != 0 {
			f.Users = append(f.Users, u)
		}
		f.AccessEntries = append(f.AccessEntries, standardEntry(r, fmt.Sprintf("arn:aws:iam::%s:user%s%s", account, cmp.Or(u.Path, "/"), u.UserName), hex))
	}
	other := fmt.Sprintf("%012d", r.Uint64N(1e12))
	for _, p := range []string{"arn:aws:iam::" + other + ":role/ci/deploy", "arn:aws:iam::" + other + ":user/auditor"} {
		if r.IntN(3) == 0 {
			f.AccessEntries = append(f.AccessEntries, standardEntry(r, p, hex))
		}
	}
	for _, e := range []world.AccessEntry{
		{PrincipalARN: "arn:aws:iam::" + account + ":role/eks-fargate-pods-" + hex(4), Type: "FARGATE_LINUX"},
		{PrincipalARN: "arn:aws:iam::" + account + ":role/hybrid-nodes-" + hex(4), Type: "HYBRID_LINUX"},
		// A managed node group's role: an EC2 node role only its entry names.
		{PrincipalARN: "arn:aws:iam::" + account + ":role/eks-nodegroup-" + hex(4), Type: "EC2_LINUX"},
	} {
		if r.IntN(3) == 0 {
			f.AccessEntries = append(f.AccessEntries, e)
		}
	}
}

// standardEntry is a STANDARD entry for principal, with or without a username, groups and an
// access policy.
func standardEntry(r *rand.Rand, principal string, hex func(int) string) world.AccessEntry {
	e := world.AccessEntry{PrincipalARN: principal, Type: "STANDARD"}
	if r.IntN(3) == 0 {
		e.Username = "user-" + hex(6)
	}
	if r.IntN(3) == 0 {
		e.KubernetesGroups = []string{"group-" + hex(4)}
	}
	if r.IntN(2) == 0 {
		e.AccessPolicies = []world.AccessPolicy{{PolicyARN: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
			AccessScope: world.AccessScope{Type: "cluster"}}}
	}
	return e
}

// generateRoles adds roles with paths, each trusting the account, a service or an OIDC provider,
// listed by name or ARN or only named by their entry.
func generateRoles(r *rand.Rand, f *world.File, policies []string, hex func(int) string) {
	account := f.Cluster.AccountID
	for i := range r.IntN(5) {
		ro := world.Role{Name: fmt.Sprintf("Role%d-%s", i, hex(4)), Path: []string{"", "/", "/ci/", "/platform/team/"}[r.IntN(4)]}
		switch r.IntN(4) {
		case 0:
			ro.AssumeRolePolicyPrincipal = "arn:aws:iam::" + account + ":root"
		case 1:
			ro.AssumeRolePolicyPrincipal = []string{"lambda.amazonaws.com", "codebuild.amazonaws.com"}[r.IntN(2)]
		case 2:
			ro.AssumeRolePolicyDocument, _ = json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity",
				"Principal": map[string]string{"Federated": "arn:aws:iam::" + account + ":oidc-provider/token.actions.githubusercontent.com"},
				"Condition": map[string]any{"StringLike": map[string]string{"token.actions.githubusercontent.com:sub": "repo:example/app:*"}}}}})
		}
		if r.IntN(2) == 0 {
			ro.ManagedPolicies = policies[:1+r.IntN(len(policies))]
		}
		if r.IntN(2) == 0 {
			ro.Description, ro.Tags = "role "+hex(4), map[string]string{"owner": hex(4)}
		}
		arn := fmt.Sprintf("arn:aws:iam::%s:role%s%s", account, cmp.Or(ro.Path, "/"), ro.Name)
		switch r.IntN(3) {
		case 0:
			// Listed: the entry may name it without its path.
			f.Roles = append(f.Roles, ro)
			if r.IntN(3) == 0 {
				arn = fmt.Sprintf("arn:aws:iam::%s:role/%s", account, ro.Name)
			}
		case 1:
			// Listed by ARN.
			ro.ARN, ro.Name, ro.Path = arn, "", ""
			f.Roles = append(f.Roles, ro)
		}
		// Else only the entry names it: the world creates it.
		f.AccessEntries = append(f.AccessEntries, standardEntry(r, arn, hex))
	}
}

// generateSSORoles adds IAM Identity Center permission sets' roles at the global or the
// region-scoped reserved path, listed with their policies and SAML trust or only named by their
// entry.
func generateSSORoles(r *rand.Rand, f *world.File, policies []string, hex func(int) string) {
	account := f.Cluster.AccountID
	paths := []string{"/aws-reserved/sso.amazonaws.com/", "/aws-reserved/sso.amazonaws.com/" + f.Cluster.Region + "/"}
	for i, set := range []string{"AdministratorAccess", "ReadOnly", "Developer"}[:r.IntN(4)] {
		ro := world.Role{Name: fmt.Sprintf("AWSReservedSSO_%s_%s", set, hex(16)), Path: paths[r.IntN(2)]}
		if r.IntN(2) == 0 {
			ro.ManagedPolicies = policies[i : i+1]
			ro.AssumeRolePolicyDocument, _ = json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Action": []string{"sts:AssumeRoleWithSAML", "sts:TagSession"},
				"Principal": map[string]string{"Federated": fmt.Sprintf("arn:aws:iam::%s:saml-provider/AWSSSO_%s_DO_NOT_DELETE", account, hex(16))},
				"Condition": map[string]any{"StringEquals": map[string]string{"SAML:aud": "https://signin.aws.amazon.com/saml"}}}}})
			f.Roles = append(f.Roles, ro)
		}
		f.AccessEntries = append(f.AccessEntries, standardEntry(r, fmt.Sprintf("arn:aws:iam::%s:role%s%s", account, ro.Path, ro.Name), hex))
	}
}
