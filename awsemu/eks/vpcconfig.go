package eks

import (
	"github.com/joinerhq/joiner/awsemu/state"
)

// vpcConfigJSON is a cluster's resourcesVpcConfig as DescribeCluster returns it.
type vpcConfigJSON struct {
	VPCID                  string   `json:"vpcId"`
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	EndpointPublicAccess   bool     `json:"endpointPublicAccess"`
	EndpointPrivateAccess  bool     `json:"endpointPrivateAccess"`
	PublicAccessCIDRs      []string `json:"publicAccessCidrs"`
}

// describedClusterJSON is clusterJSON with the cluster's VPC configuration.
type describedClusterJSON struct {
	clusterJSON
	ResourcesVPCConfig vpcConfigJSON `json:"resourcesVpcConfig"`
}

// describeCluster is the cluster as DescribeCluster returns it. The emulated cluster lives in
// its region's VPC named after it (the seeded one; else the region's only VPC): its subnets are
// that VPC's, its cluster security group the one EKS tags aws:eks:cluster-name, and its endpoint
// public and private, open to all.
func (c *call) describeCluster() describedClusterJSON {
	out := describedClusterJSON{clusterJSON: clusterOf(c.cluster)}
	cfg := vpcConfigJSON{SubnetIDs: []string{}, SecurityGroupIDs: []string{}, EndpointPublicAccess: true, EndpointPrivateAccess: true,
		PublicAccessCIDRs: []string{"0.0.0.0/0"}}
	for _, id := range state.SortedKeys(c.region.VPCs) {
		v := c.region.VPCs[id]
		if v.Tags["Name"] == c.cluster.Name || (cfg.VPCID == "" && len(c.region.VPCs) == 1) {
			cfg.VPCID = v.ID
		}
	}
	if cfg.VPCID != "" {
		for _, id := range state.SortedKeys(c.region.Subnets) {
			if c.region.Subnets[id].VPCID == cfg.VPCID {
				cfg.SubnetIDs = append(cfg.SubnetIDs, id)
			}
		}
		for _, id := range state.SortedKeys(c.region.SecurityGroups) {
			if g := c.region.SecurityGroups[id]; g.VPCID == cfg.VPCID && g.Tags["aws:eks:cluster-name"] == c.cluster.Name {
				cfg.ClusterSecurityGroupID = id
				break
			}
		}
	}
	out.ResourcesVPCConfig = cfg
	return out
}
