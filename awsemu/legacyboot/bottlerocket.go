package legacyboot

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// interpretBottlerocket reads Bottlerocket's settings TOML: cluster-name, api-server, max-pods,
// node-labels and node-taints under [settings.kubernetes]. Bottlerocket refuses settings it
// cannot parse, so the kubelet never starts.
func interpretBottlerocket(ps []part, res *Result) error {
	var doc strings.Builder
	for _, p := range ps {
		doc.WriteString(p.body + "\n")
	}
	settings, err := parseTOML(doc.String())
	if err != nil {
		return fmt.Errorf("early-boot-config: failed to parse user data as TOML: %w", err)
	}
	k := &Kubelet{Labels: map[string]string{}}
	k.ClusterName, _ = settings["settings.kubernetes"]["cluster-name"].(string)
	k.APIServerEndpoint, _ = settings["settings.kubernetes"]["api-server"].(string)
	if k.ClusterName == "" || k.APIServerEndpoint == "" {
		return fmt.Errorf("kubelet: settings.kubernetes.cluster-name and api-server are required")
	}
	if n, ok := settings["settings.kubernetes"]["max-pods"].(int64); ok {
		k.MaxPods = ptr(int32(n))
	}
	for key, v := range settings["settings.kubernetes.node-labels"] {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("settings.kubernetes.node-labels.%s must be a string", key)
		}
		k.Labels[key] = s
	}
	for _, key := range slices.Sorted(maps.Keys(settings["settings.kubernetes.node-taints"])) {
		var values []string
		switch v := settings["settings.kubernetes.node-taints"][key].(type) {
		case string:
			values = []string{v}
		case []string:
			values = v
		}
		for _, val := range values {
			value, effect, ok := strings.Cut(val, ":")
			if !ok {
				return fmt.Errorf("settings.kubernetes.node-taints.%s: %q is not value:Effect", key, val)
			}
			k.Taints = append(k.Taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
		}
	}
	if len(k.Labels) == 0 {
		k.Labels = nil
	}
	res.logf("bottlerocket: kubelet for cluster %s with %d taints", k.ClusterName, len(k.Taints))
	res.Kubelet = k
	return nil
}

// parseTOML reads the TOML subset Bottlerocket userData uses: [dotted.tables] (with quoted
// segments), and key = value pairs of strings, integers, booleans and arrays of strings. It
// returns the values by table and key.
func parseTOML(doc string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	table := ""
	for n, raw := range strings.Split(doc, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: unterminated table header", n+1)
			}
			table = unquoteDotted(strings.Trim(line, "[]"))
			if out[table] == nil {
				out[table] = map[string]any{}
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: expected key = value", n+1)
		}
		v, err := tomlValue(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if out[table] == nil {
			out[table] = map[string]any{}
		}
		out[table][unquoteDotted(strings.TrimSpace(key))] = v
	}
	return out, nil
}

func unquoteDotted(s string) string {
	var parts []string
	for s != "" {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, `"`) {
			end := strings.Index(s[1:], `"`)
			if end < 0 {
				return s
			}
			parts = append(parts, s[1:end+1])
			s = strings.TrimPrefix(strings.TrimSpace(s[end+2:]), ".")
			continue
		}
		seg, rest, _ := strings.Cut(s, ".")
		parts = append(parts, strings.TrimSpace(seg))
		s = rest
	}
	return strings.Join(parts, ".")
}

func tomlValue(s string) (any, error) {
	switch {
	case strings.HasPrefix(s, `"`):
		v, err := strconv.Unquote(s)
		if err != nil {
			return nil, fmt.Errorf("invalid string %s", s)
		}
		return v, nil
	case strings.HasPrefix(s, "["):
		if !strings.HasSuffix(s, "]") {
			return nil, fmt.Errorf("unterminated array %s", s)
		}
		var out []string
		for _, item := range strings.Split(strings.Trim(s, "[]"), ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			v, err := strconv.Unquote(item)
			if err != nil {
				return nil, fmt.Errorf("invalid array item %s", item)
			}
			out = append(out, v)
		}
		return out, nil
	case s == "true" || s == "false":
		return s == "true", nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid value %s", s)
	}
	return n, nil
}
