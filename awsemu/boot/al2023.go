package boot

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// NodeConfig media type and API versions nodeadm reads.
const (
	nodeConfigMediaType = "application/node.eks.aws"
	nodeConfigKind      = "NodeConfig"
)

// nodeConfig is the part of nodeadm's NodeConfig that decides registration.
type nodeConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Cluster struct {
			Name                 string `json:"name"`
			APIServerEndpoint    string `json:"apiServerEndpoint"`
			CertificateAuthority string `json:"certificateAuthority"`
			CIDR                 string `json:"cidr"`
		} `json:"cluster"`
		Kubelet struct {
			Config map[string]any `json:"config"`
			Flags  []string       `json:"flags"`
		} `json:"kubelet"`
		Instance struct {
			LocalStorage struct {
				Strategy string `json:"strategy"`
			} `json:"localStorage"`
		} `json:"instance"`
	} `json:"spec"`
}

var yamlSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// interpretAL2023 models an AL2023 boot: nodeadm-config reads every NodeConfig in the userData
// (MIME parts of type application/node.eks.aws, or the whole userData when it is not MIME) and
// configures the kubelet (see nodeadmInit); then cloud-init runs the shell parts, whose output
// shows on the console. The kubelet has started by then, so a script changes it only by
// running nodeadm init itself.
func interpretAL2023(in Instance) (*kubeletLaunch, *BootError) {
	launch, err := nodeadmInit(in, []string{"imds://user-data"}, func(string) ([]byte, error) { return in.UserData, nil })
	if err != nil {
		return nil, err
	}
	if parts, isMIME, _ := splitMIME(in.UserData); !isMIME || !slices.ContainsFunc(parts, func(p part) bool { return p.contentType == "text/x-shellscript" }) {
		return launch, nil
	}
	n := newNode(in, Cluster{})
	n.installNodeadm()
	n.launch = launch
	after, berr := n.runUserData()
	if berr != nil {
		return nil, berr
	}
	after.console = append(launch.console, after.console...)
	return after, nil
}

// installNodeadm puts AL2023's nodeadm on the node: "nodeadm init" run from a script reads its
// --config-source (imds://user-data, or file:// a file or a directory of them) as nodeadm-config
// does.
func (n *node) installNodeadm() {
	n.fs.writeFile("/usr/bin/nodeadm", nil, 0o755)
	n.launchers["nodeadm"] = func(_ context.Context, args []string, _ map[string]string, _, stderr io.Writer) (*kubeletLaunch, *exitError) {
		if len(args) == 0 || args[0] != "init" {
			return nil, nil
		}
		var sources []string
		for i := 1; i < len(args); i++ {
			a := args[i]
			switch {
			case (a == "-c" || a == "--config-source") && i+1 < len(args):
				i++
				sources = append(sources, strings.Split(args[i], ",")...)
			case strings.HasPrefix(a, "--config-source="):
				sources = append(sources, strings.Split(strings.TrimPrefix(a, "--config-source="), ",")...)
			}
		}
		if len(sources) == 0 {
			sources = []string{"imds://user-data"}
		}
		launch, err := nodeadmInit(n.in, sources, n.readConfigSource)
		lines := launch.consoleOrNil()
		if err != nil {
			lines = err.Console
		}
		var kept []string
		for _, line := range lines {
			if rest, ok := strings.CutPrefix(line, nodeadmP); ok {
				fmt.Fprintln(stderr, rest)
			} else {
				kept = append(kept, line)
			}
		}
		n.mu.Lock()
		n.journal = append(n.journal, kept...)
		n.mu.Unlock()
		if err != nil {
			return nil, &exitError{status: 1}
		}
		launch.console = nil
		return launch, nil
	}
}

func (l *kubeletLaunch) consoleOrNil() []string {
	if l == nil {
		return nil
	}
	return l.console
}

// readConfigSource reads one nodeadm config source: the userData, a file, or every file of a
// directory in name order (joined as YAML documents).
func (n *node) readConfigSource(source string) ([]byte, error) {
	if source == "imds://user-data" {
		return n.in.UserData, nil
	}
	p, ok := strings.CutPrefix(source, "file://")
	if !ok {
		return nil, fmt.Errorf("unknown config source %q", source)
	}
	info, err := n.fs.stat(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", source, err)
	}
	if !info.IsDir() {
		return n.fs.readFile(p)
	}
	var docs [][]byte
	for _, name := range n.fs.list(p) {
		if data, err := n.fs.readFile(path.Join(p, name)); err == nil {
			docs = append(docs, data)
		}
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

// nodeadmInit models nodeadm init: it reads every NodeConfig of its config sources, merges them
// in order (see mergeNodeConfig), validates the cluster section and writes the kubelet's config
// and flags.
func nodeadmInit(in Instance, sources []string, read func(string) ([]byte, error)) (*kubeletLaunch, *BootError) {
	console := []string{nodeadmP + `level=info msg="Loading configuration" configSource=` + strings.Join(sources, ",")}
	fail := func(format string, args ...any) *BootError {
		msg := fmt.Sprintf(format, args...)
		console = append(console,
			nodeadmP+fmt.Sprintf("level=fatal msg=\"Command failed\" error=%q", msg),
			systemd+"nodeadm-config.service: Main process exited, code=exited, status=1/FAILURE",
			systemd+"Failed to start nodeadm-config.service - EKS Nodeadm Config.")
		return bootErrorf(ReasonBootstrapFailed, console, "nodeadm init failed: %s", msg)
	}
	var docs []string
	for _, source := range sources {
		data, err := read(source)
		if err != nil {
			return nil, fail("%v", err)
		}
		d, err := nodeConfigDocuments(data)
		if err != nil {
			return nil, fail("%v", err)
		}
		docs = append(docs, d...)
	}
	var merged nodeConfig
	for i, doc := range docs {
		var nc nodeConfig
		if err := yaml.Unmarshal([]byte(doc), &nc); err != nil {
			return nil, fail("failed to decode NodeConfig %d: %v", i+1, err)
		}
		if nc.Kind != nodeConfigKind || (nc.APIVersion != "node.eks.aws/v1alpha1" && nc.APIVersion != "node.eks.aws/v1beta1") {
			return nil, fail("no kind %q is registered for version %q", nc.Kind, nc.APIVersion)
		}
		mergeNodeConfig(&merged, &nc)
	}
	cl := merged.Spec.Cluster
	switch {
	case cl.Name == "":
		return nil, fail("Name is missing in cluster configuration")
	case cl.APIServerEndpoint == "":
		return nil, fail("Apiserver endpoint is missing in cluster configuration")
	case cl.CertificateAuthority == "":
		return nil, fail("Certificate authority is missing in cluster configuration")
	case cl.CIDR == "":
		return nil, fail("CIDR is missing in cluster configuration")
	}
	ca, err := base64.StdEncoding.DecodeString(cl.CertificateAuthority)
	if err != nil {
		return nil, fail("failed to decode certificateAuthority: %v", err)
	}
	launch := &kubeletLaunch{}
	launch.reg.ClusterName = cl.Name
	launch.reg.APIServerEndpoint = cl.APIServerEndpoint
	launch.reg.CertificateAuthority = string(ca)
	if dns, ok := dnsIPFromCIDR(cl.CIDR); ok {
		launch.config.ClusterDNS = []string{dns}
	}
	launch.config.MaxPods = in.ENIMaxPods
	launch.reg.LocalDisksRAID0 = merged.Spec.Instance.LocalStorage.Strategy == "RAID0"
	if err := decodeKubeletConfig(merged.Spec.Kubelet.Config, &launch.config); err != nil {
		return nil, fail("failed to apply kubelet config: %v", err)
	}
	// nodeadm writes the flags into the kubelet's environment file as one value; systemd splits
	// it into words, honouring and removing quotes.
	launch.args, _ = splitSystemd(strings.Join(merged.Spec.Kubelet.Flags, " "), true)
	console = append(console,
		nodeadmP+`level=info msg="Configuring kubelet"`,
		nodeadmP+`level=info msg="done!"`,
		systemd+"Finished nodeadm-config.service - EKS Nodeadm Config.")
	launch.console = console
	return launch, nil
}

// nodeConfigDocuments returns the NodeConfig YAML documents in userData, in order.
func nodeConfigDocuments(userData []byte) ([]string, error) {
	parts, isMIME, err := splitMIME(userData)
	if err != nil {
		return nil, fmt.Errorf("failed to parse user data as MIME multi-part: %w", err)
	}
	if !isMIME {
		parts = []part{{contentType: nodeConfigMediaType, body: string(userData)}}
	}
	var docs []string
	for _, p := range parts {
		if p.contentType != nodeConfigMediaType {
			continue
		}
		for _, doc := range yamlSeparator.Split(p.body, -1) {
			if strings.TrimSpace(doc) != "" {
				docs = append(docs, doc)
			}
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("could not find NodeConfig within UserData")
	}
	return docs, nil
}

// mergeNodeConfig merges src into dst as nodeadm does: non-empty scalar fields of src override
// dst; spec.kubelet.flags of src are appended to dst's (and the kubelet's flag parsing then
// makes later flags win); spec.kubelet.config maps are merged deeply, src winning on conflicts.
func mergeNodeConfig(dst, src *nodeConfig) {
	d, s := &dst.Spec.Cluster, &src.Spec.Cluster
	for _, f := range []struct{ dst, src *string }{
		{&d.Name, &s.Name}, {&d.APIServerEndpoint, &s.APIServerEndpoint},
		{&d.CertificateAuthority, &s.CertificateAuthority}, {&d.CIDR, &s.CIDR},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if s := src.Spec.Instance.LocalStorage.Strategy; s != "" {
		dst.Spec.Instance.LocalStorage.Strategy = s
	}
	dst.Spec.Kubelet.Flags = append(dst.Spec.Kubelet.Flags, src.Spec.Kubelet.Flags...)
	dst.Spec.Kubelet.Config = mergeMaps(dst.Spec.Kubelet.Config, src.Spec.Kubelet.Config)
}

// mergeMaps merges src into a copy of dst: nested maps merge, other values from src replace.
func mergeMaps(dst, src map[string]any) map[string]any {
	if len(dst) == 0 {
		return src
	}
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		dm, dok := out[k].(map[string]any)
		sm, sok := v.(map[string]any)
		if dok && sok {
			out[k] = mergeMaps(dm, sm)
			continue
		}
		out[k] = v
	}
	return out
}

// decodeKubeletConfig reads clusterDNS, maxPods and registerWithTaints from a kubelet config.
func decodeKubeletConfig(cfg map[string]any, into *kubeletConfig) error {
	if len(cfg) == 0 {
		return nil
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encoding kubelet config, %w", err)
	}
	var kc struct {
		ClusterDNS         []string       `json:"clusterDNS"`
		MaxPods            *int32         `json:"maxPods"`
		RegisterWithTaints []corev1.Taint `json:"registerWithTaints"`
	}
	if err := json.Unmarshal(raw, &kc); err != nil {
		return fmt.Errorf("decoding kubelet config, %w", err)
	}
	if kc.ClusterDNS != nil {
		into.ClusterDNS = kc.ClusterDNS
	}
	if kc.MaxPods != nil {
		into.MaxPods = *kc.MaxPods
	}
	if kc.RegisterWithTaints != nil {
		into.RegisterWithTaints = kc.RegisterWithTaints
	}
	return nil
}
