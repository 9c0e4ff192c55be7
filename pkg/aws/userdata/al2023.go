package userdata

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// nodeadm's configuration API.
const (
	nodeConfigAPIVersion = "node.eks.aws/v1alpha1"
	nodeConfigKind       = "NodeConfig"
)

// nodeConfig is the NodeConfig Joiner generates.
type nodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       nodeConfigSpec `json:"spec"`
}

type nodeConfigSpec struct {
	Cluster  nodeConfigCluster   `json:"cluster"`
	Kubelet  nodeConfigKubelet   `json:"kubelet"`
	Instance *nodeConfigInstance `json:"instance,omitempty"`
}

// nodeConfigInstance is NodeConfig spec.instance; Joiner sets only localStorage.strategy, which
// nodeadm reads to set up the instance-store disks (RAID0: one array holding the kubelet's and
// containerd's state).
type nodeConfigInstance struct {
	LocalStorage nodeConfigLocalStorage `json:"localStorage"`
}

type nodeConfigLocalStorage struct {
	Strategy string `json:"strategy"`
}

type nodeConfigCluster struct {
	Name                 string `json:"name"`
	APIServerEndpoint    string `json:"apiServerEndpoint"`
	CertificateAuthority string `json:"certificateAuthority"`
	CIDR                 string `json:"cidr,omitempty"`
}

type nodeConfigKubelet struct {
	Config map[string]any `json:"config,omitempty"`
	Flags  []string       `json:"flags,omitempty"`
}

// renderAL2023 keeps the operator's parts (shell scripts, NodeConfigs, anything else) and adds
// Joiner's NodeConfig last. nodeadm merges NodeConfigs in order, and a later document's list
// (such as kubelet flags) replaces an earlier one's; the kubelet keeps the last
// --register-with-taints it is given. So Joiner moves every kubelet flag the operator set into its
// own NodeConfig, with one --register-with-taints and one --node-labels that are the union of the
// operator's and the required ones, and removes from the operator's NodeConfigs the fields Joiner
// sets itself: whatever order nodeadm applies, the result is the same, and the required taint
// survives.
func renderAL2023(opts Options) (*Result, error) {
	parts, err := al2023OperatorParts(opts.UserData)
	if err != nil {
		return nil, err
	}
	generated, err := al2023NodeConfig(opts)
	if err != nil {
		return nil, err
	}
	m := &al2023Merge{opts: opts, generated: generated}
	for i, p := range parts {
		if p.mediaType() == "text/x-shellscript" && callsBootstrap(p.body) {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataCallsBootstrap",
				Message: fmt.Sprintf("userData part %d calls /etc/eks/bootstrap.sh, which AL2023 does not have (nodeadm joins the node); the call fails and its arguments are lost", i+1),
				Fix:     "remove the bootstrap.sh call; put kubelet settings in spec.kubelet or a NodeConfig part, and labels and taints in the NodePool",
			})
		}
		if p.mediaType() != contentTypeNodeConfig {
			continue
		}
		body, err := m.rewritePart(p.body)
		if err != nil {
			return nil, fmt.Errorf("reading NodeConfig in userData part %d, %w", i+1, err)
		}
		parts[i].body = body
	}
	// A part whose NodeConfigs were all moved into Joiner's is dropped.
	parts = slices.DeleteFunc(parts, func(p part) bool { return p.mediaType() == contentTypeNodeConfig && strings.TrimSpace(p.body) == "" })
	m.finish()
	body, err := yaml.Marshal(generated)
	if err != nil {
		return nil, err
	}
	parts = append(parts, newPart(contentTypeNodeConfig, "---\n"+string(body)))
	return &Result{UserData: writeMIME(parts), Warnings: m.warnings}, nil
}

// al2023OperatorParts reads the operator's userData: a MIME document, a bare NodeConfig, or a
// script.
func al2023OperatorParts(userData string) ([]part, error) {
	switch {
	case strings.TrimSpace(userData) == "":
		return nil, nil
	case isMIME(userData):
		return parseMIME(userData)
	case strings.HasPrefix(userData, "#cloud-config"):
		return []part{newPart(contentTypeCloudConfig, userData)}, nil
	case strings.HasPrefix(userData, "#!"):
		return []part{newPart(contentTypeShell, userData)}, nil
	}
	docs, err := yamlDocuments(userData)
	if err == nil && len(docs) > 0 && isNodeConfig(docs[0]) {
		return []part{newPart(contentTypeNodeConfig, userData)}, nil
	}
	return nil, errors.New("AL2023 userData must be a MIME multi-part document, a nodeadm NodeConfig (apiVersion node.eks.aws/v1alpha1), or a shell script starting with #! (a shebang)")
}

// al2023NodeConfig is Joiner's NodeConfig: the cluster connection, every kubelet setting of the
// EC2NodeClass, and the required labels and taints.
func al2023NodeConfig(opts Options) (*nodeConfig, error) {
	// Every kubelet field Joiner does not declare goes to nodeadm as written.
	config, err := otherKubeletConfig(opts.Kubelet)
	if err != nil {
		return nil, err
	}
	if dns := opts.clusterDNS(); len(dns) > 0 {
		config["clusterDNS"] = dns
	}
	if mp := opts.maxPods(); mp != nil {
		config["maxPods"] = *mp
	}
	if k := opts.Kubelet; k != nil {
		setIf(config, "podsPerCore", k.PodsPerCore)
		setIf(config, "evictionMaxPodGracePeriod", k.EvictionMaxPodGracePeriod)
		setIf(config, "imageGCHighThresholdPercent", k.ImageGCHighThresholdPercent)
		setIf(config, "imageGCLowThresholdPercent", k.ImageGCLowThresholdPercent)
		setIf(config, "cpuCFSQuota", k.CPUCFSQuota)
		setMap(config, "systemReserved", k.SystemReserved)
		setMap(config, "kubeReserved", k.KubeReserved)
		setMap(config, "evictionHard", k.EvictionHard)
		setMap(config, "evictionSoft", k.EvictionSoft)
		if len(k.EvictionSoftGracePeriod) > 0 {
			periods := map[string]string{}
			for signal, d := range k.EvictionSoftGracePeriod {
				periods[signal] = d.Duration.String()
			}
			config["evictionSoftGracePeriod"] = periods
		}
	}
	var instance *nodeConfigInstance
	if opts.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0 {
		instance = &nodeConfigInstance{LocalStorage: nodeConfigLocalStorage{Strategy: "RAID0"}}
	}
	return &nodeConfig{
		APIVersion: nodeConfigAPIVersion,
		Kind:       nodeConfigKind,
		Spec: nodeConfigSpec{
			Instance: instance,
			Cluster: nodeConfigCluster{
				Name:                 opts.ClusterName,
				APIServerEndpoint:    opts.ClusterEndpoint,
				CertificateAuthority: opts.CABundle,
				CIDR:                 opts.ClusterCIDR,
			},
			Kubelet: nodeConfigKubelet{Config: config},
		},
	}, nil
}

func setIf[T any](m map[string]any, key string, v *T) {
	if v != nil {
		m[key] = *v
	}
}

func setMap[V ~string](m map[string]any, key string, values map[string]V) {
	if len(values) == 0 {
		return
	}
	out := map[string]string{}
	for k, v := range values {
		out[k] = string(v)
	}
	m[key] = out
}

// al2023Merge collects what the operator's NodeConfigs set while they are rewritten.
type al2023Merge struct {
	opts      Options
	generated *nodeConfig
	// flags are the operator's kubelet flags other than taints and labels, in order.
	flags    []string
	taints   []corev1.Taint
	labels   map[string]string
	warnings []Warning
}

// rewritePart removes from the operator's NodeConfigs in one part what Joiner sets itself and
// collects their flags, labels and taints. A part Joiner need not change is returned as written.
func (m *al2023Merge) rewritePart(body string) (string, error) {
	docs, err := yamlDocuments(body)
	if err != nil {
		return "", err
	}
	changed := false
	for _, doc := range docs {
		if !isNodeConfig(doc) {
			continue
		}
		if err := checkNodeConfigShape(doc); err != nil {
			return "", err
		}
		if m.rewrite(doc) {
			changed = true
		}
	}
	if !changed {
		return body, nil
	}
	var b strings.Builder
	for _, doc := range docs {
		if spec, ok := doc["spec"].(map[string]any); isNodeConfig(doc) && (!ok || len(spec) == 0) {
			continue // everything it set is now in Joiner's NodeConfig
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n")
		b.Write(out)
	}
	return b.String(), nil
}

// rewrite rewrites one operator NodeConfig in place and reports whether it changed.
func (m *al2023Merge) rewrite(doc map[string]any) bool {
	spec, _ := doc["spec"].(map[string]any)
	changed := false
	if cluster, ok := spec["cluster"].(map[string]any); ok {
		changed = m.rewriteCluster(cluster)
	}
	kubelet, ok := spec["kubelet"].(map[string]any)
	if !ok {
		return changed
	}
	if config, ok := kubelet["config"].(map[string]any); ok {
		changed = m.rewriteConfig(config) || changed
		if len(config) == 0 {
			delete(kubelet, "config")
		}
	}
	if raw, ok := kubelet["flags"]; ok {
		delete(kubelet, "flags")
		changed = true
		list, _ := raw.([]any)
		m.collectFlags(list)
	}
	if len(kubelet) == 0 {
		delete(spec, "kubelet")
	}
	return changed
}

// rewriteCluster removes the cluster connection fields Joiner sets.
func (m *al2023Merge) rewriteCluster(cluster map[string]any) bool {
	changed := false
	ours := map[string]string{
		"name": m.generated.Spec.Cluster.Name, "apiServerEndpoint": m.generated.Spec.Cluster.APIServerEndpoint,
		"certificateAuthority": m.generated.Spec.Cluster.CertificateAuthority, "cidr": m.generated.Spec.Cluster.CIDR,
	}
	for _, key := range slices.Sorted(maps.Keys(ours)) {
		theirs, set := cluster[key]
		if !set || ours[key] == "" {
			continue
		}
		delete(cluster, key)
		changed = true
		if fmt.Sprint(theirs) != ours[key] {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataClusterSettingReplaced",
				Message: fmt.Sprintf("the userData NodeConfig sets spec.cluster.%s to %v; Joiner writes the cluster's own value, %s", key, theirs, ours[key]),
				Fix:     fmt.Sprintf("remove spec.cluster.%s from userData: Joiner sets the cluster connection", key),
			})
		}
	}
	return changed
}

// rewriteConfig collects registerWithTaints and removes the kubelet config keys Joiner sets.
func (m *al2023Merge) rewriteConfig(config map[string]any) bool {
	changed := false
	if raw, ok := config["registerWithTaints"]; ok {
		delete(config, "registerWithTaints")
		changed = true
		m.taints = append(m.taints, taintsFromConfig(raw)...)
	}
	if raw, ok := config["clusterDNS"]; ok {
		m.warnings = append(m.warnings, Warning{
			Severity: SeverityAdvice, Reason: "UserDataClusterDNS",
			Message: fmt.Sprintf("the userData NodeConfig sets kubelet clusterDNS %s; the cluster DNS address belongs in the EC2NodeClass, and Joiner's value wins when it has one", flowList(raw)),
			Fix:     fmt.Sprintf("set spec.kubelet.clusterDNS: %s on the EC2NodeClass and remove clusterDNS from userData", flowList(raw)),
		})
	}
	for _, key := range slices.Sorted(maps.Keys(m.generated.Spec.Kubelet.Config)) {
		theirs, set := config[key]
		if !set {
			continue
		}
		delete(config, key)
		changed = true
		if !sameJSON(theirs, m.generated.Spec.Kubelet.Config[key]) && key != "clusterDNS" {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataKubeletSettingReplaced",
				Message: fmt.Sprintf("the userData NodeConfig sets kubelet %s to %v; Joiner writes %v, the value scheduling was computed with", key, theirs, m.generated.Spec.Kubelet.Config[key]),
				Fix:     fmt.Sprintf("set %s in the EC2NodeClass spec.kubelet and remove it from userData", key),
			})
		}
	}
	return changed
}

// collectFlags sorts the operator's kubelet flags into taints, labels and the rest.
func (m *al2023Merge) collectFlags(list []any) {
	for i := 0; i < len(list); i++ {
		flag := fmt.Sprint(list[i])
		name, value, hasValue := strings.Cut(flag, "=")
		if !hasValue && (name == "--register-with-taints" || name == "--node-labels") && i+1 < len(list) {
			value, hasValue = fmt.Sprint(list[i+1]), true
			i++
		}
		switch {
		case name == "--register-with-taints" && hasValue:
			taints, bad := parseTaints(strings.Trim(value, `"'`))
			m.taints = append(m.taints, taints...)
			m.warnings = append(m.warnings, invalidTaintWarnings(bad, "the userData NodeConfig's kubelet flag "+flag,
				"so Joiner leaves it out and the node registers without it")...)
		case name == "--node-labels" && hasValue:
			if m.labels == nil {
				m.labels = map[string]string{}
			}
			maps.Copy(m.labels, parseLabels(strings.Trim(value, `"'`)))
		case !slices.Contains(m.flags, flag):
			m.flags = append(m.flags, flag)
		}
	}
}

// finish writes the unioned flags and taints into Joiner's NodeConfig.
func (m *al2023Merge) finish() {
	taints := unionTaints(m.taints, m.opts.requiredTaints())
	m.warnings = append(m.warnings, taintWarnings(unionTaints(nil, m.taints), m.opts, "the userData NodeConfig")...)
	labels := map[string]string{}
	for k, v := range m.labels {
		labels[k] = v
	}
	ours := m.opts.kubeletLabels()
	for _, k := range slices.Sorted(maps.Keys(ours)) {
		if theirs, ok := labels[k]; ok && theirs != ours[k] {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataLabelReplaced",
				Message: fmt.Sprintf("the userData NodeConfig sets node label %s=%s; the NodePool says %s=%s, which wins", k, theirs, k, ours[k]),
				Fix:     fmt.Sprintf("remove %s from the --node-labels flag in userData", k),
			})
		}
		labels[k] = ours[k]
	}
	flags := slices.Clone(m.flags)
	if len(labels) > 0 {
		flags = append(flags, "--node-labels="+formatLabels(labels))
	}
	flags = append(flags, "--register-with-taints="+formatTaints(taints))
	m.generated.Spec.Kubelet.Flags = flags
	config := make([]map[string]string, 0, len(taints))
	for _, t := range taints {
		entry := map[string]string{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			entry["value"] = t.Value
		}
		config = append(config, entry)
	}
	m.generated.Spec.Kubelet.Config["registerWithTaints"] = config
}

// taintsFromConfig reads a kubelet config registerWithTaints list.
func taintsFromConfig(raw any) []corev1.Taint {
	var taints []corev1.Taint
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	if err := json.Unmarshal(b, &taints); err != nil {
		return nil
	}
	return taints
}

func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	var na, nb any
	_ = json.Unmarshal(ja, &na)
	_ = json.Unmarshal(jb, &nb)
	return reflect.DeepEqual(na, nb)
}

// flowList writes a list as a YAML flow sequence: [a, b].
func flowList(raw any) string {
	list, ok := raw.([]any)
	if !ok {
		return fmt.Sprint(raw)
	}
	items := make([]string, 0, len(list))
	for _, v := range list {
		items = append(items, fmt.Sprint(v))
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// yamlDocuments splits YAML into its non-empty documents, decoded as maps.
func yamlDocuments(text string) ([]map[string]any, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var docs []map[string]any
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
}

// checkNodeConfigShape refuses a NodeConfig whose fields Joiner merges have the wrong YAML type:
// nodeadm cannot decode it, so the node would never join, and merging it would drop the
// operator's settings silently. The error names the field and the type it must have.
func checkNodeConfigShape(doc map[string]any) error {
	mapping := func(parent map[string]any, path, key string) (map[string]any, error) {
		raw, ok := parent[key]
		if !ok || raw == nil {
			return nil, nil
		}
		m, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("NodeConfig %s%s is %s, want a mapping", path, key, yamlKind(raw))
		}
		return m, nil
	}
	spec, err := mapping(doc, "", "spec")
	if err != nil {
		return err
	}
	if _, err := mapping(spec, "spec.", "cluster"); err != nil {
		return err
	}
	kubelet, err := mapping(spec, "spec.", "kubelet")
	if err != nil {
		return err
	}
	if _, err := mapping(kubelet, "spec.kubelet.", "config"); err != nil {
		return err
	}
	if raw, ok := kubelet["flags"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return fmt.Errorf("NodeConfig spec.kubelet.flags is %s, want a list of strings such as [--v=2]", yamlKind(raw))
		}
		for i, item := range list {
			if _, ok := item.(string); !ok {
				return fmt.Errorf("NodeConfig spec.kubelet.flags[%d] is %s, want a string such as --v=2", i, yamlKind(item))
			}
		}
	}
	return nil
}

// yamlKind names the YAML type of a decoded value for error messages.
func yamlKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", v)
	case nil:
		return "null"
	case float64, int, int64:
		return fmt.Sprintf("the number %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	default:
		return fmt.Sprintf("the %T %v", v, v)
	}
}

func isNodeConfig(doc map[string]any) bool {
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	return strings.HasPrefix(apiVersion, "node.eks.aws/") && kind == nodeConfigKind
}
