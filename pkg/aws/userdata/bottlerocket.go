package userdata

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// Bottlerocket userData is TOML, read and written with github.com/pelletier/go-toml/v2. A
// document is read into maps (tables), slices (arrays, arrays of tables) and Go values (strings,
// int64, float64, bool, time.Time and go-toml's local date and time types), and written back from
// them. Every setting the operator wrote is kept, with the same value and type; what TOML gives no
// meaning to is not: comments, the order of tables and keys (written sorted), and the way a
// table was spelled (dotted keys, inline tables and [table] sections come back as sections).
// docs/userdata.md says so.

// bottlerocketSettings is a parsed Bottlerocket userData document.
type bottlerocketSettings map[string]any

// parseBottlerocket reads Bottlerocket userData as TOML. Empty userData is an empty document.
func parseBottlerocket(userData string) (bottlerocketSettings, error) {
	doc := bottlerocketSettings{}
	if err := toml.Unmarshal([]byte(userData), (*map[string]any)(&doc)); err != nil {
		var derr *toml.DecodeError
		if errors.As(err, &derr) {
			row, column := derr.Position()
			return nil, fmt.Errorf("TOML line %d column %d: %s", row, column, derr.Error())
		}
		return nil, fmt.Errorf("TOML: %w", err)
	}
	return doc, nil
}

// String writes the document as TOML.
func (d bottlerocketSettings) String() string {
	out, err := toml.Marshal(map[string]any(d))
	if err != nil {
		// Everything in the document was read from TOML or set by Joiner as strings, integers,
		// booleans and tables of them, which always encode.
		panic(fmt.Sprintf("writing Bottlerocket settings as TOML: %v", err))
	}
	return string(out)
}

// kubernetes returns settings.kubernetes, creating the tables when create is set. It fails when
// settings or settings.kubernetes is something other than a table; found is false when they are
// absent and create is not set.
func (d bottlerocketSettings) kubernetes(create bool) (k8s map[string]any, found bool, err error) {
	settings, found, err := subTable(d, "settings", create)
	if err != nil || !found {
		return nil, found, err
	}
	k8s, found, err = subTable(settings, "kubernetes", create)
	if err != nil {
		return nil, false, fmt.Errorf("settings.%w", err)
	}
	return k8s, found, nil
}

// subTable returns the table at key of t, creating it when create is set; it fails when key
// holds something else.
func subTable(t map[string]any, key string, create bool) (map[string]any, bool, error) {
	v, ok := t[key]
	if !ok {
		if !create {
			return nil, false, nil
		}
		sub := map[string]any{}
		t[key] = sub
		return sub, true, nil
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("%s is set to a value (%s); it must be a table", key, tomlText(v))
	}
	return sub, true, nil
}

// tomlText writes one value as TOML, for messages.
func tomlText(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	out, err := toml.Marshal(map[string]any{"v": v})
	if err != nil {
		return fmt.Sprint(v)
	}
	text := strings.TrimSpace(strings.TrimPrefix(string(out), "v = "))
	if strings.HasPrefix(text, "[") || !strings.Contains(text, "\n") {
		return text
	}
	return fmt.Sprint(v)
}

// renderBottlerocket merges Joiner's settings.kubernetes into the operator's TOML: the cluster
// connection and kubelet settings Joiner sets win, node-labels and node-taints are unioned, and
// every other table and key is kept.
func renderBottlerocket(opts Options) (*Result, error) {
	doc, err := parseBottlerocket(opts.UserData)
	if err != nil {
		return nil, fmt.Errorf("reading Bottlerocket userData as TOML, %w", err)
	}
	k8s, _, err := doc.kubernetes(true)
	if err != nil {
		return nil, fmt.Errorf("bottlerocket userData sets %w", err)
	}
	m := &bottlerocketMerge{k8s: k8s}
	m.scalar("cluster-name", opts.ClusterName)
	m.scalar("api-server", opts.ClusterEndpoint)
	m.scalar("cluster-certificate", opts.CABundle)
	switch dns := opts.clusterDNS(); len(dns) {
	case 0:
	case 1:
		m.scalar("cluster-dns-ip", dns[0])
	default:
		m.scalar("cluster-dns-ip", tomlStrings(dns))
	}
	if mp := opts.maxPods(); mp != nil {
		m.scalar("max-pods", int64(*mp))
	}
	if k := opts.Kubelet; k != nil {
		if k.EvictionMaxPodGracePeriod != nil {
			m.scalar("eviction-max-pod-grace-period", int64(*k.EvictionMaxPodGracePeriod))
		}
		if k.ImageGCHighThresholdPercent != nil {
			m.scalar("image-gc-high-threshold-percent", int64(*k.ImageGCHighThresholdPercent))
		}
		if k.ImageGCLowThresholdPercent != nil {
			m.scalar("image-gc-low-threshold-percent", int64(*k.ImageGCLowThresholdPercent))
		}
		if k.CPUCFSQuota != nil {
			m.scalar("cpu-cfs-quota-enforced", *k.CPUCFSQuota)
		}
		m.stringTable("system-reserved", toStrings(k.SystemReserved))
		m.stringTable("kube-reserved", toStrings(k.KubeReserved))
		m.stringTable("eviction-hard", toStrings(k.EvictionHard))
		m.stringTable("eviction-soft", toStrings(k.EvictionSoft))
		periods := map[string]string{}
		for signal, d := range k.EvictionSoftGracePeriod {
			periods[signal] = d.Duration.String()
		}
		m.stringTable("eviction-soft-grace-period", periods)
		// podsPerCore and the fields of Other without a Bottlerocket setting were refused by
		// CheckKubelet; every other field of Other has its settings.kubernetes key.
		for _, name := range slices.Sorted(maps.Keys(k.Other)) {
			setting, err := bottlerocketKubeletValue(name, k.Other[name].Raw)
			if err != nil {
				return nil, fmt.Errorf("spec.kubelet.%s, %w", name, err)
			}
			m.scalar(setting.key, setting.value)
		}
	}
	m.stringTable("node-labels", opts.kubeletLabels())
	m.taints(opts)
	if opts.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0 && m.err == nil {
		m.err = bottlerocketLocalStorage(doc)
	}
	if m.err != nil {
		return nil, m.err
	}
	return &Result{UserData: doc.String(), Warnings: m.warnings}, nil
}

// bottlerocketLocalStorageCommand is the name of the bootstrap command Joiner adds for
// instanceStorePolicy RAID0 ("000-" so that it runs before the operator's commands, which
// Bottlerocket runs in name order).
const bottlerocketLocalStorageCommand = "000-mount-instance-storage"

// bottlerocketLocalStorage adds settings.bootstrap-commands.000-mount-instance-storage: apiclient
// ephemeral-storage init makes a RAID-0 array of the instance-store disks, and bind mounts the
// kubelet's, containerd's and the pod logs' directories onto it, before the kubelet starts, on
// every boot (mode always; the array does not survive a stop). It is essential: a node whose
// disks could not be set up does not start, rather than starting with the small root volume that
// scheduling did not count on.
func bottlerocketLocalStorage(doc bottlerocketSettings) error {
	settings, _, err := subTable(doc, "settings", true)
	if err != nil {
		return fmt.Errorf("bottlerocket userData sets %w", err)
	}
	commands, _, err := subTable(settings, "bootstrap-commands", true)
	if err != nil {
		return fmt.Errorf("bottlerocket userData sets settings.%w", err)
	}
	commands[bottlerocketLocalStorageCommand] = map[string]any{
		"commands": []any{
			tomlStrings([]string{"apiclient", "ephemeral-storage", "init"}),
			tomlStrings([]string{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"}),
		},
		"essential": true,
		"mode":      "always",
	}
	return nil
}

// tomlStrings is a TOML array of strings, as the decoder reads one.
func tomlStrings(values []string) []any {
	out := make([]any, 0, len(values))
	for _, s := range values {
		out = append(out, s)
	}
	return out
}

type bottlerocketMerge struct {
	k8s      map[string]any
	warnings []Warning
	err      error
}

// scalar sets settings.kubernetes.<key>, advising when the operator had another value.
func (m *bottlerocketMerge) scalar(key string, v any) {
	if theirs, ok := m.k8s[key]; ok && !reflect.DeepEqual(theirs, v) {
		m.warnings = append(m.warnings, Warning{
			Severity: SeverityAdvice, Reason: "UserDataSettingReplaced",
			Message: fmt.Sprintf("the userData sets settings.kubernetes.%s; Joiner writes its own value, %s", key, tomlText(v)),
			Fix:     fmt.Sprintf("remove settings.kubernetes.%s from userData (kubelet values belong in the EC2NodeClass spec.kubelet)", key),
		})
	}
	m.k8s[key] = v
}

// stringTable merges a table of strings: Joiner's keys win, the operator's others are kept.
func (m *bottlerocketMerge) stringTable(key string, values map[string]string) {
	if len(values) == 0 {
		return
	}
	t, _, err := subTable(m.k8s, key, true)
	if err != nil {
		m.err = fmt.Errorf("bottlerocket userData sets settings.kubernetes.%w", err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if theirs, ok := t[k]; ok && theirs != values[k] {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataSettingReplaced",
				Message: fmt.Sprintf("the userData sets settings.kubernetes.%s.%q; Joiner writes %q", key, k, values[k]),
				Fix:     fmt.Sprintf("remove %q from settings.kubernetes.%s in userData", k, key),
			})
		}
		t[k] = values[k]
	}
}

// taints unions settings.kubernetes.node-taints (key = ["value:Effect", ...]) with the required
// taints.
func (m *bottlerocketMerge) taints(opts Options) {
	t, _, err := subTable(m.k8s, "node-taints", true)
	if err != nil {
		m.err = fmt.Errorf("bottlerocket userData sets settings.kubernetes.%w", err)
		return
	}
	m.warnings = append(m.warnings, taintWarnings(nodeTaints(t), opts, "the userData settings.kubernetes.node-taints")...)
	for _, required := range opts.requiredTaints() {
		entries := bottlerocketTaintValues(t[required.Key])
		if slices.ContainsFunc(entries, func(e string) bool { return bottlerocketTaint(required.Key, e) == required }) {
			continue
		}
		// The required taint replaces one of the operator's with the same key and effect.
		entries = slices.DeleteFunc(entries, func(e string) bool { return bottlerocketTaint(required.Key, e).Effect == required.Effect })
		t[required.Key] = tomlStrings(append(entries, required.Value+":"+string(required.Effect)))
	}
}

// nodeTaints reads a node-taints table, sorted by key.
func nodeTaints(t map[string]any) []corev1.Taint {
	var out []corev1.Taint
	for _, key := range slices.Sorted(maps.Keys(t)) {
		for _, entry := range bottlerocketTaintValues(t[key]) {
			out = append(out, bottlerocketTaint(key, entry))
		}
	}
	return out
}

// bottlerocketTaint reads one node-taints value: "value:Effect", or "Effect" alone.
func bottlerocketTaint(key, entry string) corev1.Taint {
	value, effect, ok := strings.Cut(entry, ":")
	if !ok {
		value, effect = "", entry
	}
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
}

// bottlerocketTaintValues reads one node-taints entry: a list of "value:Effect" or one string.
func bottlerocketTaintValues(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, item := range v {
			if s, ok := item.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func toStrings[V ~string](m map[string]V) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
