package boot

import (
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"time"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// kubeletLaunch is what a bootstrap hands the kubelet: the cluster it points at, its config
// file and its command line.
type kubeletLaunch struct {
	reg     KubeletRegistration
	config  kubeletConfig
	args    []string
	console []string
}

// Interpret reads the instance's userData as its AMI family does and returns what the kubelet
// registers with, and the console lines printed on the way. When the bootstrap fails, no
// kubelet starts, or the kubelet exits at startup, it returns a *BootError whose Console holds
// every line printed, and no registration.
//
// The kubelet is taken to be of the cluster's Kubernetes version.
//
// Interpret checks nothing against the cluster beyond what the bootstrap itself does (AL2's
// bootstrap.sh calls DescribeCluster when the endpoint or CA is missing): whether the kubelet
// then reaches and is admitted by the API server is Boot's business.
func Interpret(in Instance, c Cluster) (*KubeletRegistration, []string, error) {
	return interpretAt(in, c, in.LaunchTime)
}

// interpretAt is Interpret with the time stamped on the kubelet's log lines.
func interpretAt(in Instance, c Cluster, now time.Time) (*KubeletRegistration, []string, error) {
	var (
		launch *kubeletLaunch
		err    *BootError
	)
	switch in.AMIFamily {
	case awsv1.AMIFamilyAL2:
		launch, err = interpretAL2(in, c)
	case awsv1.AMIFamilyAL2023:
		launch, err = interpretAL2023(in)
	case awsv1.AMIFamilyBottlerocket:
		launch, err = interpretBottlerocket(in)
	case awsv1.AMIFamilyCustom, "":
		launch, err = interpretCustom(in, c)
	default:
		return nil, nil, fmt.Errorf("interpreting userData, unknown AMI family %q", in.AMIFamily)
	}
	if err != nil {
		return nil, err.Console, err
	}
	reg := launch.reg
	console := launch.console
	if kerr := applyKubelet(&reg, launch.config, launch.args, minorVersion(c.KubernetesVersion)); kerr != nil {
		console = append(console,
			kubeletP+klogLine('E', now, "run.go:72", fmt.Sprintf("\"command failed\" err=%q", kerr.Error())),
			systemd+"kubelet.service: Main process exited, code=exited, status=1/FAILURE",
			systemd+"kubelet.service: Failed with result 'exit-code'.")
		return nil, console, bootErrorf(ReasonKubeletFailed, console, "the kubelet exited at startup: %v", kerr)
	}
	console = append(console, systemd+"Started kubelet.service - Kubernetes Kubelet.")
	return &reg, console, nil
}

// dnsIPFromCIDR is the tenth address of a service CIDR, as bootstrap.sh and nodeadm derive the
// cluster DNS IP: 10.100.0.0/16 gives 10.100.0.10.
func dnsIPFromCIDR(cidr string) (string, bool) {
	ip, _, err := net.ParseCIDR(strings.TrimSpace(cidr))
	if err != nil || ip.To4() == nil {
		return "", false
	}
	v4 := ip.To4()
	return fmt.Sprintf("%d.%d.%d.10", v4[0], v4[1], v4[2]), true
}

func decodeB64(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return "", fmt.Errorf("decoding base64, %w", err)
	}
	return string(b), nil
}
