package boot

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Instance is what a booting instance knows about itself (from EC2 and its metadata service).
type Instance struct {
	// ID is the instance id, i-....
	ID string
	// Region and Zone are where the instance runs, such as us-west-2 and us-west-2a.
	Region string
	Zone   string
	// PrivateDNSName is the instance's private DNS name; the kubelet registers under this name.
	PrivateDNSName string
	// PrivateIP is the primary private IPv4 address.
	PrivateIP string
	// VPCCIDR is the VPC's primary IPv4 CIDR; bootstrap.sh picks its default cluster DNS IP from it.
	VPCCIDR string
	// InstanceType is the EC2 instance type, such as m7i.large.
	InstanceType string
	// Architecture is the node architecture as Kubernetes writes it: amd64 or arm64.
	Architecture string
	// AMIFamily is how the AMI reads userData: AL2, AL2023, Bottlerocket or Custom
	// (awsv1.AMIFamily*).
	AMIFamily string
	// UserData is the decoded userData.
	UserData []byte
	// RoleARN is the IAM role of the instance profile, or empty when the instance has none.
	RoleARN string
	// VCPU and MemoryMiB are the instance type's resources.
	VCPU      int64
	MemoryMiB int64
	// ENIMaxPods is the instance type's line in eni-max-pods.txt (ENIs × (IPv4 per ENI − 1) + 2);
	// zero when the type is not listed.
	ENIMaxPods int32
	// RootVolumeGiB is the size of the root volume; 20 when zero.
	RootVolumeGiB int64
	// InstanceStoreGB is the total size of the instance type's instance-store disks, in GB
	// (10^9 bytes); 0 when it has none.
	InstanceStoreGB int64
	// LaunchTime is when the instance entered pending; console timestamps count from it.
	LaunchTime time.Time
}

// Cluster is what the EKS control plane would answer about itself.
type Cluster struct {
	// Name is the EKS cluster name.
	Name string
	// Endpoint is the API server URL, https://....
	Endpoint string
	// CertificateAuthority is the base64-encoded cluster CA bundle, as DescribeCluster returns it.
	CertificateAuthority string
	// ServiceCIDR is kubernetesNetworkConfig.serviceIpv4Cidr, such as 10.100.0.0/16.
	ServiceCIDR string
	// KubernetesVersion is the control-plane minor version, such as 1.33; it names the kubelet.
	KubernetesVersion string
	// AuthenticationMode is CONFIG_MAP, API or API_AND_CONFIG_MAP (the default when empty).
	AuthenticationMode string
	// AccessEntries are the cluster's EKS access entries.
	AccessEntries []AccessEntry
}

// KubeletRegistration is what the node's bootstrap configured the kubelet with, after every rule
// of its AMI family was applied: what the kubelet will register.
type KubeletRegistration struct {
	// ClusterName is the cluster the node's credentials are for (bootstrap.sh's positional
	// argument, NodeConfig spec.cluster.name, settings.kubernetes.cluster-name).
	ClusterName string
	// APIServerEndpoint is the URL the kubelet connects to.
	APIServerEndpoint string
	// CertificateAuthority is the decoded CA bundle the kubelet trusts; empty when none.
	CertificateAuthority string
	// ClusterDNS is the kubelet's clusterDNS.
	ClusterDNS []string
	// MaxPods is the kubelet's maxPods; zero means the kubelet default, 110.
	MaxPods int32
	// Labels are the --node-labels.
	Labels map[string]string
	// Taints are the --register-with-taints (or registerWithTaints) the node registers with.
	Taints []corev1.Taint
	// HostnameOverride is the kubelet's --hostname-override: the Node's name instead of the
	// private DNS name. Empty when not set.
	HostnameOverride string
	// KubeletArgs is the kubelet's command line from the userData, as the kubelet receives it
	// (for AL2, the words systemd makes of $KUBELET_EXTRA_ARGS; for AL2023, of nodeadm's
	// merged flags); the AMI's own flags are not included. Bottlerocket has none.
	KubeletArgs []string
	// ExtraFlags are kubelet flags given but not interpreted here, verbatim.
	ExtraFlags []string
	// LocalDisksRAID0 says that the bootstrap made a RAID-0 array of the instance-store disks and
	// put the kubelet's and containerd's state on it (AL2 bootstrap.sh --local-disks raid0, AL2023
	// NodeConfig spec.instance.localStorage.strategy RAID0, Bottlerocket apiclient
	// ephemeral-storage init in a bootstrap command): the node's ephemeral storage is then the
	// instance store, when the type has one.
	LocalDisksRAID0 bool
	// IgnoredArguments are bootstrap arguments that were silently dropped, such as a one-word
	// --kubelet-extra-args=... that AL2's bootstrap.sh takes as a positional argument.
	IgnoredArguments []string
}

// Boot failure reasons, values of BootError.Reason and Outcome.Reason.
const (
	// ReasonUserDataInvalid: the userData could not be read (MIME, YAML, TOML).
	ReasonUserDataInvalid = "UserDataInvalid"
	// ReasonBootstrapFailed: the bootstrap script or tool exited with an error.
	ReasonBootstrapFailed = "BootstrapFailed"
	// ReasonNoBootstrap: nothing in the userData starts a kubelet.
	ReasonNoBootstrap = "NoBootstrap"
	// ReasonKubeletFailed: the kubelet refused its flags or configuration and exited.
	ReasonKubeletFailed = "KubeletFailed"
	// ReasonAPIServerUnreachable: the kubelet cannot reach or trust the API server.
	ReasonAPIServerUnreachable = "APIServerUnreachable"
	// ReasonUnauthorized: the API server does not know the node's credentials (401).
	ReasonUnauthorized = "Unauthorized"
	// ReasonForbidden: the credentials are known but may not create this Node (403).
	ReasonForbidden = "Forbidden"
	// ReasonAPIError: the API server failed the registration for another reason; retryable.
	ReasonAPIError = "APIError"
)

// BootError is a boot that stopped before a kubelet could register. Console holds the lines the
// instance printed up to and including the failure.
type BootError struct {
	// Reason is one of the Reason* constants.
	Reason string
	// Message is a one-line summary.
	Message string
	// Console are the lines printed, oldest first, without timestamps.
	Console []string
}

func (e *BootError) Error() string {
	return fmt.Sprintf("%s: %s", e.Reason, e.Message)
}

func bootErrorf(reason string, console []string, format string, args ...any) *BootError {
	msg := fmt.Sprintf(format, args...)
	return &BootError{Reason: reason, Message: msg, Console: console}
}
