package boot

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strings"

	"github.com/joinerhq/joiner/awsemu/boot/shell"
)

// bootstrapPath is where AL2 EKS AMIs keep their bootstrap script.
const bootstrapPath = "/etc/eks/bootstrap.sh"

// al2Option returns the variable a bootstrap.sh option sets. Every option takes a value: it is
// a "--name value" pair consumed with shift 2; nothing else is an option.
func al2Option(option string) (string, bool) {
	switch option {
	case "--use-max-pods":
		return "USE_MAX_PODS", true
	case "--b64-cluster-ca":
		return "B64_CLUSTER_CA", true
	case "--apiserver-endpoint":
		return "APISERVER_ENDPOINT", true
	case "--kubelet-extra-args":
		return "KUBELET_EXTRA_ARGS", true
	case "--enable-docker-bridge":
		return "ENABLE_DOCKER_BRIDGE", true
	case "--aws-api-retry-attempts":
		return "API_RETRY_ATTEMPTS", true
	case "--docker-config-json":
		return "DOCKER_CONFIG_JSON", true
	case "--containerd-config-file":
		return "CONTAINERD_CONFIG_FILE", true
	case "--pause-container-account":
		return "PAUSE_CONTAINER_ACCOUNT", true
	case "--pause-container-version":
		return "PAUSE_CONTAINER_VERSION", true
	case "--dns-cluster-ip":
		return "DNS_CLUSTER_IP", true
	case "--container-runtime":
		return "CONTAINER_RUNTIME", true
	case "--ip-family":
		return "IP_FAMILY", true
	case "--service-ipv6-cidr":
		return "SERVICE_IPV6_CIDR", true
	case "--enable-local-outpost":
		return "ENABLE_LOCAL_OUTPOST", true
	case "--cluster-id":
		return "CLUSTER_ID", true
	case "--mount-bpf-fs":
		return "MOUNT_BPF_FS", true
	case "--local-disks":
		return "LOCAL_DISKS", true
	}
	return "", false
}

// interpretAL2 runs the userData's scripts and models every /etc/eks/bootstrap.sh call in them.
// The last bootstrap.sh call that succeeded configures the kubelet.
func interpretAL2(in Instance, c Cluster) (*kubeletLaunch, *BootError) {
	return runBootstrapScripts(in, func(cmd shell.Command) (bool, *kubeletLaunch, *exitError) {
		args, ok := invocation(cmd, "bootstrap.sh")
		if !ok {
			return false, nil, nil
		}
		launch, err := bootstrapAL2(args, cmd.Env, in, c)
		return true, launch, err
	})
}

// launcher recognises a command that starts a kubelet and models it.
type launcher func(cmd shell.Command) (handled bool, launch *kubeletLaunch, err *exitError)

// runBootstrapScripts runs the userData's shell scripts with launch recognising the commands
// that start a kubelet.
func runBootstrapScripts(in Instance, launch launcher) (*kubeletLaunch, *BootError) {
	scripts, console, err := shellScripts(in.UserData)
	if err != nil {
		lines := []string{cloudInit + fmt.Sprintf("__init__.py[WARNING]: Failed reading user data: %v", err)}
		return nil, bootErrorf(ReasonUserDataInvalid, lines, "userData is not valid MIME: %v", err)
	}
	var (
		last         *kubeletLaunch
		tried        bool
		lastErr      string
		scriptFailed bool
	)
	for _, s := range scripts {
		lines, failed := runScript(s, func(cmd shell.Command) (bool, []string, *exitError) {
			handled, l, err := launch(cmd)
			if !handled {
				return false, nil, nil
			}
			tried = true
			if err != nil {
				lastErr = strings.Join(err.console, "; ")
				return true, err.console, err
			}
			last = l
			return true, l.console, nil
		})
		console = append(console, lines...)
		scriptFailed = scriptFailed || failed
	}
	switch {
	case last != nil:
		last.console = append(console, last.journal...)
		return last, nil
	case tried:
		return nil, bootErrorf(ReasonBootstrapFailed, console, "%s failed: %s", bootstrapPath, lastErr)
	case scriptFailed:
		return nil, bootErrorf(ReasonBootstrapFailed, console, "the userData script failed before it started a kubelet")
	default:
		console = append(console, cloudInit+"Cloud-init finished: no bootstrap command ran, kubelet.service was never started")
		return nil, bootErrorf(ReasonNoBootstrap, console, "the userData never calls %s or starts a kubelet", bootstrapPath)
	}
}

// parseBootstrapArgs is bootstrap.sh's option loop: a known option takes the next word as its
// value (shift 2), anything else is saved as a positional argument. Exported variables are the
// defaults (bootstrap.sh reads ${VAR:-default}).
func parseBootstrapArgs(args []string, env map[string]string) (map[string]string, []string, *exitError) {
	vars := map[string]string{}
	maps.Copy(vars, env)
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" {
			return nil, nil, &exitError{status: 1, console: []string{"usage: " + bootstrapPath + " [options] <cluster-name>"}}
		}
		name, ok := al2Option(a)
		if !ok {
			positional = append(positional, a)
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, &exitError{status: 1, console: []string{bootstrapPath + ": $2: unbound variable"}}
		}
		i++
		vars[name] = args[i]
	}
	return vars, positional, nil
}

// checkBootstrapVars is bootstrap.sh's validation before it touches the node.
func checkBootstrapVars(clusterName string, vars map[string]string) *exitError {
	if clusterName == "" {
		return &exitError{status: 1, console: []string{"CLUSTER_NAME is not defined"}}
	}
	if rt := vars["CONTAINER_RUNTIME"]; rt != "" && rt != "containerd" && rt != "dockerd" {
		return &exitError{status: 1, console: []string{"Container runtime " + rt + " is not supported."}}
	}
	if ipf := strings.ToLower(vars["IP_FAMILY"]); ipf != "" && ipf != "ipv4" && ipf != "ipv6" {
		return &exitError{status: 1, console: []string{"Invalid IpFamily. Only ipv4 or ipv6 are allowed"}}
	}
	return nil
}

// bootstrapDNS is bootstrap.sh's cluster DNS IP: --dns-cluster-ip, else the tenth address of the
// service CIDR DescribeCluster returned, else a default picked from the VPC CIDR.
func bootstrapDNS(flag, serviceCIDR, vpcCIDR string) string {
	if flag != "" {
		return flag
	}
	if ip, ok := dnsIPFromCIDR(serviceCIDR); ok {
		return ip
	}
	return defaultDNSForVPC(vpcCIDR)
}

// bootstrapAL2 models one bootstrap.sh run: its option loop, its defaults, DescribeCluster when
// the endpoint or CA is missing, the CA decode, and the kubelet drop-in it writes.
func bootstrapAL2(args []string, env map[string]string, in Instance, c Cluster) (*kubeletLaunch, *exitError) {
	vars, positional, failure := parseBootstrapArgs(args, env)
	if failure != nil {
		return nil, failure
	}
	launch := &kubeletLaunch{}
	if len(positional) > 0 {
		launch.reg.ClusterName = positional[0]
		launch.reg.IgnoredArguments = positional[1:]
	}
	if failure := checkBootstrapVars(launch.reg.ClusterName, vars); failure != nil {
		return nil, failure
	}
	var out []string
	serviceCIDR := ""
	if vars["B64_CLUSTER_CA"] == "" || vars["APISERVER_ENDPOINT"] == "" {
		if launch.reg.ClusterName != c.Name {
			return nil, &exitError{status: 255, console: []string{
				"Waiter ClusterActive failed: Waiter encountered a terminal failure state: An error occurred (ResourceNotFoundException): No cluster found for name: " + launch.reg.ClusterName + ".",
				"An error occurred (ResourceNotFoundException) when calling the DescribeCluster operation: No cluster found for name: " + launch.reg.ClusterName + ".",
			}}
		}
		vars["B64_CLUSTER_CA"], vars["APISERVER_ENDPOINT"], serviceCIDR = c.CertificateAuthority, c.Endpoint, c.ServiceCIDR
	}
	ca, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(vars["B64_CLUSTER_CA"]), ""))
	if err != nil {
		return nil, &exitError{status: 1, console: append(out, "base64: invalid input")}
	}
	launch.reg.CertificateAuthority = string(ca)
	launch.reg.APIServerEndpoint = vars["APISERVER_ENDPOINT"]

	launch.config.ClusterDNS = []string{bootstrapDNS(vars["DNS_CLUSTER_IP"], serviceCIDR, in.VPCCIDR)}
	if useMaxPods := vars["USE_MAX_PODS"]; (useMaxPods == "" || useMaxPods == "true") && in.ENIMaxPods > 0 {
		launch.config.MaxPods = in.ENIMaxPods
	}
	if v := c.KubernetesVersion; v != "" {
		out = append(out, "Using kubelet version "+v)
	}
	if rt := vars["CONTAINER_RUNTIME"]; rt == "" || rt == "containerd" {
		out = append(out, "Using containerd as the container runtime")
	}

	// bootstrap.sh writes Environment='KUBELET_EXTRA_ARGS=$KUBELET_EXTRA_ARGS' into a drop-in;
	// systemd unquotes the assignment, then splits the unbraced $KUBELET_EXTRA_ARGS in
	// ExecStart into words, honouring and removing quotes.
	extra := vars["KUBELET_EXTRA_ARGS"]
	if extra != "" {
		extra = systemdEnvironment("'KUBELET_EXTRA_ARGS="+extra+"'", "KUBELET_EXTRA_ARGS", &launch.journal)
	}
	words, _ := shell.SplitSystemd(extra, true)
	launch.args = words
	out = append(out, "Created symlink from /etc/systemd/system/multi-user.target.wants/kubelet.service to /etc/systemd/system/kubelet.service.")
	launch.console = out
	return launch, nil
}

// systemdEnvironment reads an Environment= value as systemd does and returns the value it gives
// name. Words that are not NAME=VALUE are ignored with systemd's warning; at a syntax error
// (an unterminated quote) systemd stops reading the line, keeping the assignments before it.
func systemdEnvironment(value, name string, console *[]string) string {
	const dropIn = "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf:2"
	words, err := shell.SplitSystemd(value, false)
	if err != nil {
		*console = append(*console, systemd+fmt.Sprintf("%s: Invalid syntax, ignoring: Environment=%s", dropIn, value))
	}
	result := ""
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			*console = append(*console, systemd+fmt.Sprintf("%s: Invalid environment assignment, ignoring: %s", dropIn, w))
			continue
		}
		if k == name {
			result = v
		}
	}
	return result
}
