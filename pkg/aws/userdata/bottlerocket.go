package userdata

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// renderBottlerocket merges Joiner's settings.kubernetes into the operator's TOML: the cluster
// connection and kubelet settings Joiner sets win, node-labels and node-taints are unioned, and
// every other table and key is kept as written.
func renderBottlerocket(opts Options) (*Result, error) {
	doc, err := parseTOML(opts.UserData)
	if err != nil {
		return nil, fmt.Errorf("reading Bottlerocket userData as TOML, %w", err)
	}
	settings, ok := doc.table("settings")
	if !ok {
		return nil, fmt.Errorf("bottlerocket userData sets settings to a value; it must be a table of settings")
	}
	k8s, ok := settings.table("kubernetes")
	if !ok {
		return nil, fmt.Errorf("bottlerocket userData sets settings.kubernetes to a value; it must be a table")
	}
	m := &bottlerocketMerge{k8s: k8s}
	m.scalar("cluster-name", tomlString(opts.ClusterName))
	m.scalar("api-server", tomlString(opts.ClusterEndpoint))
	m.scalar("cluster-certificate", tomlString(opts.CABundle))
	switch dns := opts.clusterDNS(); len(dns) {
	case 0:
	case 1:
		m.scalar("cluster-dns-ip", tomlString(dns[0]))
	default:
		m.scalar("cluster-dns-ip", tomlStrings(dns))
	}
	if mp := opts.maxPods(); mp != nil {
		m.scalar("max-pods", tomlInteger(int64(*mp)))
	}
	if k := opts.Kubelet; k != nil {
		if k.PodsPerCore != nil {
			m.scalar("pods-per-core", tomlInteger(int64(*k.PodsPerCore)))
		}
		if k.EvictionMaxPodGracePeriod != nil {
			m.scalar("eviction-max-pod-grace-period", tomlInteger(int64(*k.EvictionMaxPodGracePeriod)))
		}
		if k.ImageGCHighThresholdPercent != nil {
			m.scalar("image-gc-high-threshold-percent", tomlInteger(int64(*k.ImageGCHighThresholdPercent)))
		}
		if k.ImageGCLowThresholdPercent != nil {
			m.scalar("image-gc-low-threshold-percent", tomlInteger(int64(*k.ImageGCLowThresholdPercent)))
		}
		if k.CPUCFSQuota != nil {
			m.scalar("cpu-cfs-quota-enforced", tomlBool(*k.CPUCFSQuota))
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
	}
	m.stringTable("node-labels", opts.kubeletLabels())
	m.taints(opts)
	if m.err != nil {
		return nil, m.err
	}
	return &Result{UserData: writeTOML(doc), Warnings: m.warnings}, nil
}

type bottlerocketMerge struct {
	k8s      *tomlTable
	warnings []Warning
	err      error
}

// scalar sets settings.kubernetes.<key>, advising when the operator had another value.
func (m *bottlerocketMerge) scalar(key string, v *tomlValue) {
	if e := m.k8s.get(key); e != nil {
		if e.value == nil || !reflect.DeepEqual(e.value.plain(), v.plain()) {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataSettingReplaced",
				Message: fmt.Sprintf("the userData sets settings.kubernetes.%s; Joiner writes its own value, %s", key, v.text()),
				Fix:     fmt.Sprintf("remove settings.kubernetes.%s from userData (kubelet values belong in the EC2NodeClass spec.kubelet)", key),
			})
		}
	}
	m.k8s.set(key, v)
}

// stringTable merges a table of strings: Joiner's keys win, the operator's others are kept.
func (m *bottlerocketMerge) stringTable(key string, values map[string]string) {
	if len(values) == 0 {
		return
	}
	t, ok := m.k8s.table(key)
	if !ok {
		m.err = fmt.Errorf("bottlerocket userData sets settings.kubernetes.%s to a value; it must be a table", key)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if e := t.get(k); e != nil && e.value != nil && e.value.plain() == values[k] {
			continue
		} else if e != nil {
			m.warnings = append(m.warnings, Warning{
				Severity: SeverityAdvice, Reason: "UserDataSettingReplaced",
				Message: fmt.Sprintf("the userData sets settings.kubernetes.%s.%q; Joiner writes %q", key, k, values[k]),
				Fix:     fmt.Sprintf("remove %q from settings.kubernetes.%s in userData", k, key),
			})
		}
		t.set(k, tomlString(values[k]))
	}
}

// taints unions settings.kubernetes.node-taints (key = ["value:Effect", ...]) with the required
// taints.
func (m *bottlerocketMerge) taints(opts Options) {
	t, ok := m.k8s.table("node-taints")
	if !ok {
		m.err = fmt.Errorf("bottlerocket userData sets settings.kubernetes.node-taints to a value; it must be a table")
		return
	}
	var operator []corev1.Taint
	for _, key := range t.keys {
		for _, entry := range bottlerocketTaintValues(t.get(key)) {
			operator = append(operator, bottlerocketTaint(key, entry))
		}
	}
	m.warnings = append(m.warnings, taintWarnings(operator, opts, "the userData settings.kubernetes.node-taints")...)
	for _, required := range opts.requiredTaints() {
		entries := bottlerocketTaintValues(t.get(required.Key))
		if slices.ContainsFunc(entries, func(e string) bool { return bottlerocketTaint(required.Key, e) == required }) {
			continue
		}
		// The required taint replaces one of the operator's with the same key and effect.
		entries = slices.DeleteFunc(entries, func(e string) bool { return bottlerocketTaint(required.Key, e).Effect == required.Effect })
		t.set(required.Key, tomlStrings(append(entries, required.Value+":"+string(required.Effect))))
	}
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
func bottlerocketTaintValues(e *tomlEntry) []string {
	if e == nil || e.value == nil {
		return nil
	}
	switch e.value.kind {
	case "string":
		return []string{e.value.str}
	case "array":
		var out []string
		for _, item := range e.value.items {
			out = append(out, item.str)
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
