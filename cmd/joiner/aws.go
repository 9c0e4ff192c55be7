package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"strconv"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/provider"
	"github.com/joinerhq/joiner/pkg/aws/sdk"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// awsOptions are the flags of --cloud-provider aws; ClusterEndpoint is the operator's
// --cluster-endpoint. What the cluster flags leave empty is read with EKS DescribeCluster of
// --cluster-name.
type awsOptions struct {
	Region            string
	ClusterEndpoint   string
	ClusterCABundle   string
	ServiceCIDR       string
	KubernetesVersion string
	// RateLimitScale is sdk.Options.RateLimitScale.
	RateLimitScale float64
	// VMMemoryOverheadPercent is provider.Options.VMMemoryOverheadPercent, Karpenter's setting of
	// the name: the share of an instance type's memory the hypervisor keeps.
	VMMemoryOverheadPercent float64

	// envErr is AWS_RATE_LIMIT_SCALE or VM_MEMORY_OVERHEAD_PERCENT when not a number; validate
	// reports it.
	envErr error
}

func (o *awsOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Region, "aws-region", os.Getenv("AWS_REGION"), "With --cloud-provider aws: the cluster's AWS region [AWS_REGION]. AWS_ENDPOINT_URL overrides the AWS endpoints")
	fs.StringVar(&o.ClusterCABundle, "cluster-ca-bundle", os.Getenv("CLUSTER_CA_BUNDLE"), "The base64 cluster CA certificate; empty: EKS DescribeCluster [CLUSTER_CA_BUNDLE]")
	fs.StringVar(&o.ServiceCIDR, "service-cidr", os.Getenv("SERVICE_CIDR"), "The cluster's service CIDR (cluster DNS is its .10 address); empty: EKS DescribeCluster [SERVICE_CIDR]")
	fs.StringVar(&o.KubernetesVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "The cluster's Kubernetes version (major.minor) for AMI aliases; empty: EKS DescribeCluster [KUBERNETES_VERSION]")
	scale := sdk.DefaultRateLimitScale
	if v := os.Getenv("AWS_RATE_LIMIT_SCALE"); v != "" {
		var err error
		if scale, err = strconv.ParseFloat(v, 64); err != nil {
			o.envErr = fmt.Errorf("AWS_RATE_LIMIT_SCALE=%q is not a number: give 0 (off) or a share such as %v", v, sdk.DefaultRateLimitScale)
		}
	}
	fs.Float64Var(&o.RateLimitScale, "aws-rate-limit-scale", scale, fmt.Sprintf("The AWS clients pace themselves to AWS's published API rate limits (EC2's request and instance token buckets, "+
		"SSM's and the Price List API's) times this share, so the controller slows as a whole instead of being throttled; %v leaves room for the account's other callers, "+
		"1 is AWS's own rates, 0 turns pacing off [AWS_RATE_LIMIT_SCALE]", sdk.DefaultRateLimitScale))
	overhead := instancetype.DefaultVMMemoryOverheadPercent
	if v := os.Getenv("VM_MEMORY_OVERHEAD_PERCENT"); v != "" {
		var err error
		if overhead, err = strconv.ParseFloat(v, 64); err != nil {
			o.envErr = errors.Join(o.envErr, fmt.Errorf("VM_MEMORY_OVERHEAD_PERCENT=%q is not a number: give a share of memory such as %v", v, instancetype.DefaultVMMemoryOverheadPercent))
		}
	}
	fs.Float64Var(&o.VMMemoryOverheadPercent, "vm-memory-overhead-percent", overhead, "The share of each instance type's memory the hypervisor keeps, subtracted before "+
		"kube-reserved and eviction thresholds, as Karpenter's setting of the name (0.075 is 7.5%) [VM_MEMORY_OVERHEAD_PERCENT]")
}

// validate refuses what cannot start, before anything is contacted.
func (o *awsOptions) validate() error {
	if o.envErr != nil {
		return o.envErr
	}
	if !(o.RateLimitScale >= 0) || math.IsInf(o.RateLimitScale, 0) {
		return fmt.Errorf("--aws-rate-limit-scale %v is not a share of AWS's rate limits: give 0 (off) or a positive number such as %v", o.RateLimitScale, sdk.DefaultRateLimitScale)
	}
	// 0 is refused rather than taken: the instance-type provider reads 0 as its default.
	if !(o.VMMemoryOverheadPercent > 0 && o.VMMemoryOverheadPercent < 1) {
		return fmt.Errorf("--vm-memory-overhead-percent %v is not a share of memory Joiner takes: give a number above 0 and below 1, such as %v (7.5%%)", o.VMMemoryOverheadPercent, instancetype.DefaultVMMemoryOverheadPercent)
	}
	if o.Region == "" {
		return errors.New("--cloud-provider aws needs --aws-region (AWS_REGION): set it to the cluster's AWS region")
	}
	if o.ServiceCIDR != "" {
		if _, err := clusterDNS(o.ServiceCIDR); err != nil {
			return err
		}
	}
	return nil
}

// EKSAPI is the EKS call the operator makes; *eks.Client satisfies it.
type EKSAPI interface {
	DescribeCluster(ctx context.Context, in *eks.DescribeClusterInput, opts ...func(*eks.Options)) (*eks.DescribeClusterOutput, error)
}

// cluster returns what nodes need to join the cluster named name, reading from EKS what the
// flags leave empty.
func (o *awsOptions) cluster(ctx context.Context, api EKSAPI, name string) (userdata.Cluster, string, error) {
	c := userdata.Cluster{Name: name, Endpoint: o.ClusterEndpoint, CABundle: o.ClusterCABundle, CIDR: o.ServiceCIDR}
	version := o.KubernetesVersion
	if c.Endpoint == "" || c.CABundle == "" || c.CIDR == "" || version == "" {
		out, err := api.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: awssdk.String(name)})
		if err != nil {
			return c, "", fmt.Errorf("describing EKS cluster %s (or set --cluster-endpoint, --cluster-ca-bundle, --service-cidr and --kubernetes-version), %w", name, err)
		}
		ec := out.Cluster
		if ec == nil {
			return c, "", fmt.Errorf("describing EKS cluster %s: no cluster in the response", name)
		}
		if c.Endpoint == "" {
			c.Endpoint = awssdk.ToString(ec.Endpoint)
		}
		if c.CABundle == "" && ec.CertificateAuthority != nil {
			c.CABundle = awssdk.ToString(ec.CertificateAuthority.Data)
		}
		if c.CIDR == "" && ec.KubernetesNetworkConfig != nil {
			c.CIDR = awssdk.ToString(ec.KubernetesNetworkConfig.ServiceIpv4Cidr)
			if c.CIDR == "" {
				c.CIDR = awssdk.ToString(ec.KubernetesNetworkConfig.ServiceIpv6Cidr)
			}
		}
		if version == "" {
			version = awssdk.ToString(ec.Version)
		}
	}
	// Every value is required: a node whose userData lacks one (the CA bundle above all) boots but
	// never joins, so refusing to start is the only honest answer.
	for flag, v := range map[string]string{"--cluster-endpoint": c.Endpoint, "--cluster-ca-bundle": c.CABundle, "--service-cidr": c.CIDR, "--kubernetes-version": version} {
		if v == "" {
			return c, "", fmt.Errorf("EKS cluster %s has no value for %s: set the flag", name, flag)
		}
	}
	dns, err := clusterDNS(c.CIDR)
	if err != nil {
		return c, "", err
	}
	c.DNS = dns
	return c, version, nil
}

// clusterDNS is the cluster DNS Service IP of a service CIDR: its .10 address, as on EKS.
func clusterDNS(cidr string) (string, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", fmt.Errorf("service CIDR %q is not a CIDR, %w", cidr, err)
	}
	a := p.Masked().Addr().As16()
	a[15] += 10
	return netip.AddrFrom16(a).Unmap().String(), nil
}

// newAWS builds the AWS provider for the cluster named clusterName; kube reads EC2NodeClasses,
// reg receives the AWS clients' metrics.
func newAWS(ctx context.Context, o awsOptions, clusterName string, kube client.Reader, clk clock.Clock, reg prometheus.Registerer) (*provider.AWS, error) {
	cfg, err := sdk.LoadConfig(ctx, sdk.Options{Region: o.Region, RateLimitScale: o.RateLimitScale, Clock: clk, Registerer: reg})
	if err != nil {
		return nil, err
	}
	cluster, version, err := o.cluster(ctx, eks.NewFromConfig(cfg), clusterName)
	if err != nil {
		return nil, err
	}
	return provider.Build(kube, sdk.NewClients(cfg), provider.Options{Cluster: cluster, Region: o.Region, KubernetesVersion: version, VMMemoryOverheadPercent: o.VMMemoryOverheadPercent}, clk), nil
}
