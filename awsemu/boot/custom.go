package boot

import (
	"encoding/base64"

	"github.com/joinerhq/joiner/awsemu/boot/shell"
)

// interpretCustom reads userData that Joiner passed through untouched. NodeConfig parts mean an
// AL2023-based AMI and are read by nodeadm; otherwise the shell scripts run, where a
// bootstrap.sh call is read as on AL2 and a direct kubelet call has its flags read as kubelet
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
	return runBootstrapScripts(in, func(cmd shell.Command) (bool, *kubeletLaunch, *exitError) {
		if args, ok := invocation(cmd, "bootstrap.sh"); ok {
			launch, err := bootstrapAL2(args, cmd.Env, in, c)
			return true, launch, err
		}
		args, ok := invocation(cmd, "kubelet")
		if !ok {
			return false, nil, nil
		}
		ca, _ := base64.StdEncoding.DecodeString(c.CertificateAuthority)
		return true, &kubeletLaunch{
			reg:  KubeletRegistration{ClusterName: c.Name, APIServerEndpoint: c.Endpoint, CertificateAuthority: string(ca)},
			args: args,
		}, nil
	})
}
