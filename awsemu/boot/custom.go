package boot

import (
	"context"
	"encoding/base64"
	"io"
)

// interpretCustom reads userData that Joiner passed through untouched. NodeConfig parts mean an
// AL2023-based AMI and are read by nodeadm; otherwise the shell scripts run on an AMI that has
// AL2's bootstrap.sh, nodeadm and the kubelet: a bootstrap.sh call is read as on AL2, a
// nodeadm init call as on AL2023, and a direct kubelet call has its flags read as kubelet
// flags. A kubelet started directly is assumed to have a kubeconfig for the cluster (its
// contents are not visible in the userData). Anything else starts no kubelet.
func interpretCustom(in Instance, c Cluster) (*kubeletLaunch, *BootError) {
	if parts, isMIME, err := splitMIME(in.UserData); err == nil && isMIME {
		for _, p := range parts {
			if p.contentType == nodeConfigMediaType {
				return interpretAL2023(in)
			}
		}
	}
	n := newNode(in, c)
	n.installBootstrap()
	n.installNodeadm()
	n.launchers["kubelet"] = n.directKubelet
	return n.runUserData()
}

// directKubelet is the kubelet run from the script with its flags on the command line.
func (n *node) directKubelet(_ context.Context, args []string, _ map[string]string, _, _ io.Writer) (*kubeletLaunch, *exitError) {
	ca, _ := base64.StdEncoding.DecodeString(n.c.CertificateAuthority)
	return &kubeletLaunch{
		reg:  KubeletRegistration{ClusterName: n.c.Name, APIServerEndpoint: n.c.Endpoint, CertificateAuthority: string(ca)},
		args: args,
	}, nil
}
