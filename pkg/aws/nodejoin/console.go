package nodejoin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// Patterns of the log lines ReadConsole recognises. They follow what the programs print (klog's
// structured form for the kubelet, logrus for nodeadm), not the emulator's wording: the kubelet
// writes `"Unable to register node with API server" err="<the API server's message>"` at every
// failed registration attempt and `"command failed" err="<why>"` when it exits at startup.
var (
	registerFailed = regexp.MustCompile(`"Unable to register node with API server" err="((?:[^"\\]|\\.)*)"`)
	// registerFailedV1 is the kubelet's form before structured logging (Kubernetes 1.20 and older).
	registerFailedV1 = regexp.MustCompile(`Unable to register node "[^"]*" with API server: (.*)$`)
	commandFailed    = regexp.MustCompile(`"command failed" err="((?:[^"\\]|\\.)*)"`)
	nodeadmFatal     = regexp.MustCompile(`nodeadm\[\d+\]: .*level=fatal msg="Command failed" error="((?:[^"\\]|\\.)*)"`)
	// forbiddenUser is the RBAC refusal of an identity that is not in system:nodes.
	forbiddenUser = regexp.MustCompile(`forbidden: User \\?"([^"\\]+)\\?" cannot create resource \\?"nodes\\?"`)
	// forbiddenNode is the NodeRestriction refusal of a system:node identity of another name.
	forbiddenNode = regexp.MustCompile(`forbidden: node \\?"([^"\\]+)\\?" is not allowed to modify node \\?"([^"\\]+)\\?"`)
	// bootstrapFatal are bootstrap.sh's own fatal messages (amazon-eks-ami, AL2).
	bootstrapFatal = []string{"CLUSTER_NAME is not defined", "is not supported.", "Invalid IpFamily", "No cluster found for name", "base64: invalid input"}
	// extraArgsIgnored is systemd dropping part of the kubelet's extra-args drop-in.
	extraArgsIgnored = regexp.MustCompile(`kubelet\.service\.d/[^:]*:\d+: Invalid (?:environment assignment|syntax), ignoring: (.*)$`)
)

// ReadConsole reads an instance's console output (as GetConsoleOutput returns it, decoded) and
// says why its Node has not joined, as far as the console proves it. The kubelet retries its
// registration, so the last registration failure counts: a refusal followed by a success is no
// refusal. Anything else seen (a registration error that may be transient, systemd ignoring part
// of the kubelet's drop-in) is reported as uncertain, with the line; nothing recognised gives an
// empty uncertain Diagnosis.
func ReadConsole(output string) cloudprovider.Diagnosis {
	return ReadConsoleOf(output, Identity{})
}

// Identity is what is known of the instance whose console is read: its node role's ARN as IAM
// returns it (path included) and the cluster's name. What is known replaces the placeholders of a
// refused registration's fix, so that the operator can run it as printed; either may be empty.
type Identity struct {
	RoleARN, ClusterName string
}

// ReadConsoleOf is ReadConsole for an instance of known identity.
func ReadConsoleOf(output string, id Identity) cloudprovider.Diagnosis {
	var (
		certain   *cloudprovider.Diagnosis
		uncertain cloudprovider.Diagnosis
	)
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.Contains(line, `"Successfully registered node"`) {
			certain, uncertain = nil, cloudprovider.Diagnosis{}
			continue
		}
		d, ok := readLine(line, id)
		if !ok {
			continue
		}
		d.Evidence = strings.TrimSpace(line)
		if d.Certain {
			certain = &d
			continue
		}
		uncertain = d
	}
	if certain != nil {
		return *certain
	}
	return uncertain
}

// readLine classifies one console line; ok is false when the line says nothing about joining.
func readLine(line string, id Identity) (cloudprovider.Diagnosis, bool) {
	if m := registerFailed.FindStringSubmatch(line); m != nil {
		return registrationError(unquote(m[1]), id), true
	}
	if m := registerFailedV1.FindStringSubmatch(line); m != nil {
		return registrationError(strings.TrimSpace(m[1]), id), true
	}
	if m := commandFailed.FindStringSubmatch(line); m != nil {
		return kubeletStartError(unquote(m[1])), true
	}
	if m := nodeadmFatal.FindStringSubmatch(line); m != nil {
		return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonBootstrapFailed,
			Message: fmt.Sprintf("nodeadm init failed, so no kubelet started: %s. Fix the NodeConfig in the EC2NodeClass's userData", unquote(m[1]))}, true
	}
	for _, s := range bootstrapFatal {
		if strings.Contains(line, s) {
			return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonBootstrapFailed,
				Message: "/etc/eks/bootstrap.sh failed, so no kubelet started: " + strings.TrimSpace(afterPrefix(line)) +
					". Fix the bootstrap.sh call in the EC2NodeClass's userData"}, true
		}
	}
	if m := extraArgsIgnored.FindStringSubmatch(line); m != nil {
		return cloudprovider.Diagnosis{Message: "systemd ignored part of the kubelet's extra arguments (" + m[1] +
			"): the kubelet may be missing flags the userData meant to give it"}, true
	}
	return cloudprovider.Diagnosis{}, false
}

// registrationError classifies the API server's answer to the kubelet's registration.
func registrationError(msg string, id Identity) cloudprovider.Diagnosis {
	role, mapped, cluster := "the instance's IAM role", "arn:aws:iam::<account>:role/<node role, without its path>", "<cluster>"
	principal := "<role ARN>"
	if id.RoleARN != "" {
		// aws-auth matches the role without its IAM path (aws-iam-authenticator canonicalises the
		// assumed role); an access entry takes the ARN as IAM gives it.
		role, mapped, principal = "the instance's IAM role "+id.RoleARN, CanonicalRoleARN(id.RoleARN), id.RoleARN
	}
	if id.ClusterName != "" {
		cluster = id.ClusterName
	}
	switch {
	case msg == "Unauthorized":
		return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			Message: fmt.Sprintf("The API server answers the kubelet 401 Unauthorized: %s maps to no Kubernetes identity. "+
				"Map it in kube-system/aws-auth (mapRoles: rolearn: %s, "+
				"username: system:node:{{EC2PrivateDNSName}}, groups: [system:bootstrappers, system:nodes]) "+
				"or create an EKS access entry of type EC2_LINUX for it (aws eks create-access-entry --cluster-name %s --principal-arn %s --type EC2_LINUX)",
				role, mapped, cluster, principal)}
	case forbiddenUser.MatchString(msg):
		user := forbiddenUser.FindStringSubmatch(msg)[1]
		return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			Message: fmt.Sprintf("The API server answers the kubelet 403 Forbidden: %s is mapped to %q, which may not register nodes. "+
				"In its kube-system/aws-auth mapRoles entry (rolearn: %s) set username: system:node:{{EC2PrivateDNSName}} and groups: [system:bootstrappers, system:nodes] "+
				"(or replace its access entry by one of type EC2_LINUX)", role, user, mapped)}
	case forbiddenNode.MatchString(msg):
		m := forbiddenNode.FindStringSubmatch(msg)
		return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonNodeRoleNotAuthorized,
			Message: fmt.Sprintf("The API server answers the kubelet 403 Forbidden: it authenticates as node %q but registers node %q. "+
				"In the node role's kube-system/aws-auth mapRoles entry (rolearn: %s) set username: system:node:{{EC2PrivateDNSName}}", m[1], m[2], mapped)}
	case strings.Contains(msg, "x509: certificate signed by unknown authority"):
		return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonClusterCertificateMismatch,
			Message: "The kubelet does not trust the API server's certificate: the CA it was given is not the cluster's. " +
				"Pass the cluster's certificateAuthority.data (aws eks describe-cluster) to the bootstrap, or leave it out and let the bootstrap read it"}
	}
	return cloudprovider.Diagnosis{Message: "The kubelet's last registration attempt failed: " + msg}
}

// kubeletStartError classifies why the kubelet exited at startup.
func kubeletStartError(msg string) cloudprovider.Diagnosis {
	for _, s := range []string{"failed to parse kubelet flag", "invalid taint", "unknown flag", "flag needs an argument", "invalid argument"} {
		if strings.Contains(msg, s) {
			return cloudprovider.Diagnosis{Certain: true, Reason: cloudprovider.ReasonInvalidKubeletArguments,
				Message: "The kubelet exits at startup: " + msg + ". Fix the kubelet flags in the EC2NodeClass's userData " +
					"(--kubelet-extra-args for bootstrap.sh, spec.kubelet.flags for nodeadm); taints are key=value:Effect, comma-separated without spaces"}
		}
	}
	return cloudprovider.Diagnosis{Message: "The kubelet exited at startup: " + msg}
}

// unquote undoes the escaping klog applies inside a quoted value.
func unquote(s string) string {
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return s
}

// afterPrefix strips the console's uptime stamp and the program prefix ("cloud-init[2411]: ").
func afterPrefix(line string) string {
	if i := strings.Index(line, "] "); strings.HasPrefix(strings.TrimSpace(line), "[") && i >= 0 {
		line = line[i+2:]
	}
	if i := strings.Index(line, "]: "); i >= 0 {
		line = line[i+3:]
	}
	return line
}
