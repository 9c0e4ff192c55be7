package nodejoin_test

import (
	"strings"
	"testing"

	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Console lines in the formats the programs print: the kubelet's klog lines (structured since
// Kubernetes 1.21, unstructured before), nodeadm's logrus lines, bootstrap.sh's messages and
// systemd's, behind the kernel console's uptime stamp.
const (
	header       = "[    0.000000] Linux version 6.1 (mockbuild@amazon.com) #1 SMP\n[    5.120000] Cloud-init v. 22.2.2 running 'modules:final' at Wed, 25 Nov 2026 13:50:00 +0000.\n"
	attempt      = `[   31.200000] kubelet[3127]: I1125 13:50:31.200000    3127 kubelet_node_status.go:75] "Attempting to register node" node="ip-10-0-1-5.us-west-2.compute.internal"` + "\n"
	unauthorized = `[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="Unauthorized" node="ip-10-0-1-5.us-west-2.compute.internal"` + "\n"
	registered   = `[   48.000000] kubelet[3127]: I1125 13:50:48.000000    3127 kubelet_node_status.go:78] "Successfully registered node" node="ip-10-0-1-5.us-west-2.compute.internal"` + "\n"
)

func TestReadConsole(t *testing.T) {
	tests := []struct {
		name    string
		console string
		// reason is the certain reason, "" for an uncertain diagnosis.
		reason string
		// message must be in the Message ("" for an empty Message).
		message string
	}{
		{name: "empty console", console: ""},
		{name: "boot still running", console: header},
		{name: "kubelet started, no answer yet", console: header + attempt},
		{name: "401 unauthorized (structured klog)", console: header + attempt + unauthorized,
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: "username: system:node:{{EC2PrivateDNSName}}"},
		{name: "401 repeated, lease and reflector noise after it", console: header + attempt + unauthorized + attempt + unauthorized +
			`[   31.300000] kubelet[3127]: E1125 13:50:31.300000    3127 controller.go:145] "Failed to ensure lease exists, will retry" err="Unauthorized" interval="7s"` + "\n",
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: "401 Unauthorized"},
		{name: "401 unauthorized (unstructured, 1.20 and older)", console: header +
			`Feb 18 12:46:16 ip-10-0-1-229 kubelet[4015]: E0218 12:46:16.432412    4015 kubelet_node_status.go:103] Unable to register node "ip-10-0-1-229.us-west-2.compute.internal" with API server: Unauthorized` + "\n",
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: "aws eks create-access-entry"},
		{name: "reflector Unauthorized alone is not the registration", console: header +
			`[   31.300000] kubelet[3127]: E1125 13:50:31.300000    3127 reflector.go:148] k8s.io/client-go/informers/factory.go:150: Failed to watch *v1.Service: failed to list *v1.Service: Unauthorized` + "\n"},
		{name: "refused, then mapped and registered", console: header + attempt + unauthorized + attempt + registered},
		{name: "403 identity without system:nodes", console: header + attempt +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="nodes is forbidden: User \"arn:aws:sts::111122223333:assumed-role/KarpenterNodeRole-demo/i-0abc\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="ip-10-0-1-5.us-west-2.compute.internal"` + "\n",
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: `mapped to "arn:aws:sts::111122223333:assumed-role/KarpenterNodeRole-demo/i-0abc"`},
		{name: "403 wrong node name", console: header + attempt +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="nodes \"ip-10-0-1-5.us-west-2.compute.internal\" is forbidden: node \"i-0abc\" is not allowed to modify node \"ip-10-0-1-5.us-west-2.compute.internal\"" node="ip-10-0-1-5.us-west-2.compute.internal"` + "\n",
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: `authenticates as node "i-0abc"`},
		{name: "403 unstructured, system:anonymous", console: header +
			`E0107 11:41:52.642553    7251 kubelet_node_status.go:94] Unable to register node "k8s-worker-02" with API server: nodes is forbidden: User "system:anonymous" cannot create resource "nodes" in API group "" at the cluster scope` + "\n",
			reason: cloudprovider.ReasonNodeRoleNotAuthorized, message: `"system:anonymous"`},
		{name: "CA mismatch", console: header + attempt +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="Post \"https://ABC.gr7.us-west-2.eks.amazonaws.com/api/v1/nodes\": tls: failed to verify certificate: x509: certificate signed by unknown authority" node="ip-10-0-1-5"` + "\n",
			reason: cloudprovider.ReasonClusterCertificateMismatch, message: "certificateAuthority"},
		{name: "endpoint lookup failure may be transient", console: header + attempt +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="Post \"https://wrong.example/api/v1/nodes\": dial tcp: lookup wrong.example: no such host" node="ip-10-0-1-5"` + "\n",
			message: "no such host"},
		{name: "API server 500 is not certain", console: header + attempt +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="the server is currently unable to handle the request (post nodes)" node="ip-10-0-1-5"` + "\n",
			message: "unable to handle the request"},
		{name: "invalid taint effect", console: header +
			`[   12.000000] kubelet[3127]: E1125 13:50:12.000000    3127 run.go:72] "command failed" err="failed to parse kubelet flag: invalid argument \"karpenter.sh/unregistered:NoExcute\" for \"--register-with-taints\" flag: invalid taint effect: NoExcute, unsupported taint effect"` + "\n" +
			"[   12.010000] systemd[1]: kubelet.service: Main process exited, code=exited, status=1/FAILURE\n",
			reason: cloudprovider.ReasonInvalidKubeletArguments, message: "unsupported taint effect"},
		{name: "unknown kubelet flag", console: header +
			`[   12.000000] kubelet[3127]: E1125 13:50:12.000000    3127 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: --node-labesl"` + "\n",
			reason: cloudprovider.ReasonInvalidKubeletArguments, message: "--node-labesl"},
		{name: "kubelet exits for another reason", console: header +
			`[   12.000000] kubelet[3127]: E1125 13:50:12.000000    3127 run.go:72] "command failed" err="failed to run Kubelet: validate service connection: CRI v1 runtime API is not implemented"` + "\n",
			message: "CRI v1 runtime API"},
		{name: "nodeadm fatal", console: header +
			`[    9.000000] nodeadm[1980]: time="2026-11-25T13:50:09Z" level=fatal msg="Command failed" error="could not unmarshal config: error converting YAML to JSON"` + "\n",
			reason: cloudprovider.ReasonBootstrapFailed, message: "could not unmarshal config"},
		{name: "bootstrap.sh without a cluster name", console: header + "[    9.000000] cloud-init[2411]: CLUSTER_NAME is not defined\n",
			reason: cloudprovider.ReasonBootstrapFailed, message: "CLUSTER_NAME is not defined"},
		{name: "systemd ignores part of the extra args", console: header +
			"[    9.000000] systemd[1]: /etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf:2: Invalid environment assignment, ignoring: --node-labels=a=b\n",
			message: "systemd ignored part of the kubelet's extra arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := nodejoin.ReadConsole(tt.console)
			if d.Certain != (tt.reason != "") || d.Reason != tt.reason {
				t.Errorf("ReadConsole = certain %v reason %q, want reason %q (message %q)", d.Certain, d.Reason, tt.reason, d.Message)
			}
			if tt.message == "" && d.Message != "" {
				t.Errorf("Message = %q, want none", d.Message)
			}
			if !strings.Contains(d.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", d.Message, tt.message)
			}
			if d.Message != "" && d.Evidence == "" {
				t.Errorf("Evidence is empty for message %q", d.Message)
			}
		})
	}
}

// TestReadConsoleOfNamesTheRole: with the node role known, a refused registration's fix names it:
// aws-auth's rolearn without the role's IAM path (aws-iam-authenticator matches it so), the access
// entry's principal as IAM gives it, and the cluster.
func TestReadConsoleOfNamesTheRole(t *testing.T) {
	id := nodejoin.Identity{RoleARN: "arn:aws:iam::111122223333:role/nodes/eks/NodeRole", ClusterName: "prod"}
	tests := []struct {
		name, console string
		want          []string
	}{
		{name: "401", console: header + unauthorized, want: []string{
			"the instance's IAM role arn:aws:iam::111122223333:role/nodes/eks/NodeRole maps to no Kubernetes identity",
			"rolearn: arn:aws:iam::111122223333:role/NodeRole,",
			"--cluster-name prod --principal-arn arn:aws:iam::111122223333:role/nodes/eks/NodeRole --type EC2_LINUX",
		}},
		{name: "403 not in system:nodes", console: header +
			`[   31.210000] kubelet[3127]: E1125 13:50:31.210000    3127 kubelet_node_status.go:95] "Unable to register node with API server" err="nodes is forbidden: User \"node\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="ip-10-0-1-5"` + "\n",
			want: []string{`is mapped to "node"`, "(rolearn: arn:aws:iam::111122223333:role/NodeRole)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := nodejoin.ReadConsoleOf(tt.console, id)
			if d.Reason != cloudprovider.ReasonNodeRoleNotAuthorized {
				t.Fatalf("reason %q, want %q (message %q)", d.Reason, cloudprovider.ReasonNodeRoleNotAuthorized, d.Message)
			}
			for _, w := range tt.want {
				if !strings.Contains(d.Message, w) {
					t.Errorf("message %q lacks %q", d.Message, w)
				}
			}
			if strings.Contains(d.Message, "<") {
				t.Errorf("message %q still has a placeholder", d.Message)
			}
		})
	}
}
