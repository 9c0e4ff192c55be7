package boot

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"path"
	"strings"
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

// interpretAL2 runs the userData's scripts with /etc/eks/bootstrap.sh modelled. The last
// bootstrap.sh call that succeeded configures the kubelet.
func interpretAL2(in Instance, c Cluster) (*kubeletLaunch, *BootError) {
	n := newNode(in, c)
	n.installBootstrap()
	return n.runUserData()
}

// installBootstrap puts AL2's /etc/eks/bootstrap.sh on the node.
func (n *node) installBootstrap() {
	n.fs.writeFile(bootstrapPath, nil, 0o755)
	n.launchers["bootstrap.sh"] = n.bootstrapAL2
}

// runUserData runs the userData's shell scripts, in order, as cloud-init's scripts-user module
// does, and returns the kubelet the last successful launcher started.
func (n *node) runUserData() (*kubeletLaunch, *BootError) {
	scripts, console, err := shellScripts(n.in.UserData)
	if err != nil {
		lines := []string{cloudInit + fmt.Sprintf("__init__.py[WARNING]: Failed reading user data: %v", err)}
		return nil, bootErrorf(ReasonUserDataInvalid, lines, "userData is not valid MIME: %v", err)
	}
	scriptFailed := false
	for _, s := range scripts {
		lines, status := n.runScript(context.Background(), s)
		console = append(console, lines...)
		scriptFailed = scriptFailed || status != 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.launch != nil:
		launch := *n.launch
		launch.console = append(console, n.journal...)
		return &launch, nil
	case n.tried:
		return nil, bootErrorf(ReasonBootstrapFailed, append(console, n.journal...), "%s failed: %s", bootstrapPath, n.lastErr)
	case scriptFailed:
		return nil, bootErrorf(ReasonBootstrapFailed, append(console, n.journal...), "the userData script failed before it started a kubelet")
	default:
		console = append(console, n.journal...)
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
func (n *node) bootstrapAL2(_ context.Context, args []string, env map[string]string, stdout, _ io.Writer) (*kubeletLaunch, *exitError) {
	in, c := n.in, n.c
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
	launch.reg.LocalDisksRAID0 = vars["LOCAL_DISKS"] == "raid0"

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

	// bootstrap.sh writes the drop-in with an unquoted here-document, so the value goes in
	// verbatim; then it reloads systemd and starts the kubelet, which gets the words systemd
	// makes of $KUBELET_EXTRA_ARGS.
	if extra := vars["KUBELET_EXTRA_ARGS"]; extra != "" {
		n.fs.writeFile(path.Join(kubeletDropInDir, "30-kubelet-extra-args.conf"),
			[]byte("[Service]\nEnvironment='KUBELET_EXTRA_ARGS="+extra+"'\n"), 0o644)
	}
	n.daemonReload()
	var journal []string
	launch.args, journal = n.kubeletExtraArgs()
	n.mu.Lock()
	n.journal = append(n.journal, journal...)
	n.mu.Unlock()
	out = append(out, "Created symlink from /etc/systemd/system/multi-user.target.wants/kubelet.service to /etc/systemd/system/kubelet.service.")
	for _, line := range out {
		fmt.Fprintln(stdout, line)
	}
	return launch, nil
}
