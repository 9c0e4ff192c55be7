package state

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// AMI families, as EC2NodeClass names them.
const (
	FamilyAL2          = "AL2"
	FamilyAL2023       = "AL2023"
	FamilyBottlerocket = "Bottlerocket"
	FamilyCustom       = "Custom"
)

// EKSAMIOwner is the account that publishes the EKS-optimized AMIs in the emulator.
const EKSAMIOwner = "602401143452"

// AllowAllPolicy is a policy document that allows every action on every resource.
const AllowAllPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`

// SeedOptions shapes the ready-made world Seed builds.
type SeedOptions struct {
	// ClusterName tags the subnets and security groups `karpenter.sh/discovery: ClusterName`.
	ClusterName string
	// KubernetesVersions get one AMI per family, architecture and release.
	KubernetesVersions []string
	// ControllerAccessKey is the access key id of ControllerRole, allowed everything unless the
	// test replaces its policies.
	ControllerAccessKey string
	ControllerRole      string
	// NodeRole is created with an instance profile of the same name.
	NodeRole string
	// Releases are the AMI release dates (newest last) published for each version.
	Releases []time.Time
	// ClusterEndpoint is the API server URL the seeded EKS cluster reports; "" keeps the made-up
	// https://ID.gr7.REGION.eks.amazonaws.com.
	ClusterEndpoint string
	// ClusterCA is the PEM certificate bundle of the cluster's API server, reported base64
	// encoded as the cluster's certificate authority data; nil reports none.
	ClusterCA []byte
	// Timings replace the world's lifecycle timings field by field; zero fields keep the
	// world's (DefaultTimings in a new World).
	Timings Timings
}

// DefaultSeed is the world the local stack starts with.
func DefaultSeed() SeedOptions {
	return SeedOptions{
		ClusterName:         "demo",
		KubernetesVersions:  []string{"1.31", "1.32", "1.33"},
		ControllerAccessKey: "AKIDJOINERCONTROLLER",
		ControllerRole:      "JoinerControllerRole",
		NodeRole:            "KarpenterNodeRole-demo",
		Releases: []time.Time{
			time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC),
		},
	}
}

// Seed adds to every region a VPC, one private subnet per zone and two security groups tagged for
// discovery, and the EKS-optimized images; and to IAM the controller role with its access key and
// the node role with its instance profile. The EKS cluster named ClusterName is created in every
// region with ClusterEndpoint and ClusterCA when they are set, and o.Timings override the world's.
func (w *World) Seed(o SeedOptions) {
	w.Timings = w.Timings.Override(o.Timings)
	discovery := Tags{"karpenter.sh/discovery": o.ClusterName}
	second := byte(0)
	for _, name := range SortedKeys(w.Regions) {
		r := w.Regions[name]
		second += 16
		vpc := &VPC{ID: w.NewID("vpc"), CIDR: fmt.Sprintf("10.%d.0.0/16", second), Tags: Tags{"Name": o.ClusterName}}
		r.VPCs[vpc.ID] = vpc
		for i, z := range r.Zones {
			s := &Subnet{
				ID: w.NewID("subnet"), VPCID: vpc.ID, Zone: z.Name, ZoneID: z.ID,
				CIDR: fmt.Sprintf("10.%d.%d.0/20", second, i*16), AvailableIPs: 4091,
				Tags: Tags{"karpenter.sh/discovery": o.ClusterName, "kubernetes.io/role/internal-elb": "1", "Name": o.ClusterName + "-private-" + z.Name},
			}
			r.Subnets[s.ID] = s
		}
		for _, sg := range []SecurityGroup{
			{Name: "eks-cluster-sg-" + o.ClusterName, Description: "EKS created security group", Tags: Tags{"aws:eks:cluster-name": o.ClusterName}},
			{Name: o.ClusterName + "-node", Description: "Nodes of " + o.ClusterName, Tags: discovery},
		} {
			sg.ID, sg.VPCID = w.NewID("sg"), vpc.ID
			r.SecurityGroups[sg.ID] = &sg
		}
		w.seedImages(r, o)
	}
	w.seedIAM(o)
	// The cluster lets the node role join through an access entry, so the default world boots
	// nodes; tests of unmapped roles remove it.
	for _, name := range SortedKeys(w.Regions) {
		r := w.Regions[name]
		c := w.PutCluster(r, o.ClusterName, o.KubernetesVersions[len(o.KubernetesVersions)-1])
		if o.ClusterEndpoint != "" {
			c.Endpoint = o.ClusterEndpoint
		}
		if len(o.ClusterCA) > 0 {
			c.CertificateData = base64.StdEncoding.EncodeToString(o.ClusterCA)
		}
		w.PutAccessEntry(r, c, w.IAM.Roles[o.NodeRole].ARN, AccessEntryEC2Linux)
		// The interruption queue is named after the cluster, as Karpenter's setup names it.
		w.PutQueue(r, o.ClusterName)
		r.InterruptionQueues = []string{o.ClusterName}
	}
}

func (w *World) seedImages(r *Region, o SeedOptions) {
	for _, v := range o.KubernetesVersions {
		for _, rel := range o.Releases {
			stamp := rel.Format("20060102")
			for _, img := range []Image{
				{Family: FamilyAL2, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2, Architecture: "arm64", Name: fmt.Sprintf("amazon-eks-arm64-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-gpu-node-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-al2023-x86_64-standard-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "arm64", Name: fmt.Sprintf("amazon-eks-node-al2023-arm64-standard-%s-v%s", v, stamp)},
				{Family: FamilyAL2023, Architecture: "x86_64", Name: fmt.Sprintf("amazon-eks-node-al2023-x86_64-nvidia-%s-v%s", v, stamp)},
				{Family: FamilyBottlerocket, Architecture: "x86_64", Name: fmt.Sprintf("bottlerocket-aws-k8s-%s-x86_64-v1.%s", v, stamp)},
				{Family: FamilyBottlerocket, Architecture: "arm64", Name: fmt.Sprintf("bottlerocket-aws-k8s-%s-aarch64-v1.%s", v, stamp)},
			} {
				img.ID = w.NewID("ami")
				img.OwnerID, img.OwnerAlias = EKSAMIOwner, "amazon"
				img.CreationDate, img.KubernetesVersion = rel, v
				img.Variant = "standard"
				if strings.Contains(img.Name, "gpu") || strings.Contains(img.Name, "nvidia") {
					img.Variant = "nvidia"
				}
				img.Description = "EKS Kubernetes Worker AMI (" + img.Family + ", k8s " + v + ")"
				r.Images[img.ID] = &img
			}
		}
	}
}

func (w *World) seedIAM(o SeedOptions) {
	ctrl := w.PutRole(o.ControllerRole, map[string]string{"allow-all": AllowAllPolicy})
	w.IAM.AccessKeys[o.ControllerAccessKey] = ctrl.Name
	w.PutRole(o.NodeRole, nil)
	p := w.PutInstanceProfile(o.NodeRole)
	p.RoleName = o.NodeRole
}

// PutRole creates or replaces the named role with the given inline policies.
func (w *World) PutRole(name string, policies map[string]string) *Role {
	if policies == nil {
		policies = map[string]string{}
	}
	r, ok := w.IAM.Roles[name]
	if !ok {
		r = &Role{
			Name: name, ID: "AROA" + strings.ToUpper(w.NewID("")[1:]), Path: "/", CreatedAt: w.Now, Tags: Tags{},
			ARN:                      fmt.Sprintf("arn:aws:iam::%s:role/%s", w.AccountID, name),
			AssumeRolePolicyDocument: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
		}
		w.IAM.Roles[name] = r
	}
	r.Policies = policies
	return r
}

// PutInstanceProfile creates the named instance profile if it does not exist and returns it.
func (w *World) PutInstanceProfile(name string) *InstanceProfile {
	if p, ok := w.IAM.InstanceProfiles[name]; ok {
		return p
	}
	p := &InstanceProfile{
		Name: name, ID: "AIPA" + strings.ToUpper(w.NewID("")[1:]), Path: "/", CreatedAt: w.Now, Tags: Tags{},
		ARN: fmt.Sprintf("arn:aws:iam::%s:instance-profile/%s", w.AccountID, name),
	}
	w.IAM.InstanceProfiles[name] = p
	return p
}
