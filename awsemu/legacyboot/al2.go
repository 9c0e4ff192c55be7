package legacyboot

import (
	"fmt"
	"strings"
)

// isBootstrapOption reports whether AL2's /etc/eks/bootstrap.sh takes name as an option, as
// `--name value` (two words). Anything else, including `--name=value`, is a positional argument.
func isBootstrapOption(name string) bool {
	switch name {
	case "--use-max-pods", "--b64-cluster-ca", "--apiserver-endpoint", "--kubelet-extra-args",
		"--enable-docker-bridge", "--aws-api-retry-attempts", "--docker-config-json",
		"--containerd-config-file", "--pause-container-account", "--pause-container-version",
		"--dns-cluster-ip", "--container-runtime", "--ip-family", "--service-ipv6-cidr",
		"--enable-local-outpost", "--cluster-id", "--local-disks":
		return true
	}
	return false
}

// interpretAL2 runs the shell parts of AL2 userData far enough to find the bootstrap.sh call and
// does what bootstrap.sh does with its arguments.
func interpretAL2(ps []part, res *Result) error {
	vars := map[string]string{}
	for _, p := range ps {
		if p.contentType != "text/x-shellscript" {
			res.logf("cloud-init: skipping part of type %s", p.contentType)
			continue
		}
		for _, line := range logicalLines(p.body) {
			words, err := shellWords(strings.TrimSpace(line), vars)
			if err != nil {
				return fmt.Errorf("/var/lib/cloud/instance/scripts/part-001: %w", err)
			}
			if name, value, ok := assignment(words); ok {
				vars[name] = value
				continue
			}
			if len(words) > 0 && strings.HasSuffix(words[0], "/etc/eks/bootstrap.sh") {
				return bootstrap(words[1:], res)
			}
		}
	}
	return fmt.Errorf("userData never calls /etc/eks/bootstrap.sh: the kubelet is not started")
}

// bootstrap parses arguments as bootstrap.sh's option loop does: known options consume the next
// word, everything else is positional; the first positional is the cluster name.
func bootstrap(args []string, res *Result) error {
	res.logf("+ /etc/eks/bootstrap.sh %s", strings.Join(args, " "))
	opts := map[string]string{}
	var positional []string
	for i := 0; i < len(args); i++ {
		if !isBootstrapOption(args[i]) {
			positional = append(positional, args[i])
			continue
		}
		if i+1 >= len(args) {
			return fmt.Errorf("/etc/eks/bootstrap.sh: line 1: $2: unbound variable")
		}
		opts[args[i]] = args[i+1]
		i++
	}
	if len(positional) == 0 {
		return fmt.Errorf("CLUSTER_NAME is not defined")
	}
	k := &Kubelet{ClusterName: positional[0], APIServerEndpoint: opts["--apiserver-endpoint"]}
	for _, p := range positional[1:] {
		res.logf("bootstrap.sh: ignoring positional argument %q", p)
	}
	if dns := opts["--dns-cluster-ip"]; dns != "" {
		k.ClusterDNS = []string{dns}
	}
	k.Flags = systemdWords(opts["--kubelet-extra-args"])
	res.logf("Using kubelet extra args: %s", opts["--kubelet-extra-args"])
	if err := k.applyFlags(k.Flags); err != nil {
		return err
	}
	res.Kubelet = k
	return nil
}
