package userdata

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// spec.kubelet is open to every field of the kubelet's configuration (awsv1.KubeletConfiguration:
// declared fields, and Other). What reaches the kubelet depends on the AMI family:
//   - AL2023: every field, in Joiner's NodeConfig spec.kubelet.config (nodeadm writes it into the
//     kubelet's configuration file).
//   - AL2: the declared fields, as bootstrap.sh --kubelet-extra-args flags; none of Other.
//   - Bottlerocket: the declared fields except podsPerCore (its kubelet configuration template has
//     no setting for it), and the fields of Other that have a settings.kubernetes key
//     (bottlerocketKubeletKeys).
//   - Custom: the declared fields are used for scheduling only (the operator's userData
//     configures the kubelet); Other, which scheduling does not use, would reach nothing.
// A field that would not reach the kubelet is refused (CheckKubelet), never dropped.

// Reasons of CheckKubelet, used as ValidationSucceeded reasons, as Karpenter names them.
const (
	// ReasonInvalidKubeletConfiguration: a field of spec.kubelet is not a kubelet field, has the
	// wrong type, or is one Joiner sets itself.
	ReasonInvalidKubeletConfiguration = "InvalidKubeletConfiguration"
	// ReasonUnsupportedKubeletConfiguration: the AMI family cannot pass a field to the kubelet.
	ReasonUnsupportedKubeletConfiguration = "UnsupportedKubeletConfiguration"
)

// CheckKubelet says whether every field of spec.kubelet reaches the kubelet of the family: ""
// when it does, else the reason and a message naming each refused field and the fix.
func CheckKubelet(family string, k *awsv1.KubeletConfiguration) (reason, message string) {
	if k == nil {
		return "", ""
	}
	if problems := k.ValidateOther(); len(problems) > 0 {
		return ReasonInvalidKubeletConfiguration, strings.Join(problems, "; ")
	}
	unsupported := unsupportedKubeletFields(family, k)
	if len(unsupported) == 0 {
		return "", ""
	}
	fix := "remove them, or use the AL2023 AMI family, whose nodeadm takes every kubelet field"
	if family == awsv1.AMIFamilyCustom {
		fix = "remove them and configure the kubelet in spec.userData, which a Custom AMI boots with as written"
	}
	return ReasonUnsupportedKubeletConfiguration, fmt.Sprintf("spec.kubelet sets fields the %s AMI family cannot pass to the kubelet, so they would be ignored: %s: %s",
		family, strings.Join(unsupported, ", "), fix)
}

// unsupportedKubeletFields are the fields of k that the family does not pass, sorted.
func unsupportedKubeletFields(family string, k *awsv1.KubeletConfiguration) []string {
	var out []string
	switch family {
	case awsv1.AMIFamilyAL2023:
		return nil
	case awsv1.AMIFamilyBottlerocket:
		if k.PodsPerCore != nil {
			out = append(out, "podsPerCore")
		}
		for _, name := range slices.Sorted(maps.Keys(k.Other)) {
			if _, err := bottlerocketKubeletValue(name, k.Other[name].Raw); err != nil {
				out = append(out, name)
			}
		}
	default:
		out = slices.Sorted(maps.Keys(k.Other))
	}
	slices.Sort(out)
	return out
}

// otherKubeletConfig is Other as JSON values, for nodeadm's NodeConfig.
func otherKubeletConfig(k *awsv1.KubeletConfiguration) (map[string]any, error) {
	out := map[string]any{}
	if k == nil {
		return out, nil
	}
	for name, value := range k.Other {
		var v any
		if err := json.Unmarshal(value.Raw, &v); err != nil {
			return nil, fmt.Errorf("reading spec.kubelet.%s, %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// bottlerocketKubeletKeys maps kubelet configuration fields to the settings.kubernetes keys
// Bottlerocket's kubelet configuration template renders them from (scalars and lists of
// strings, taken as they are).
func bottlerocketKubeletKeys() map[string]string {
	return map[string]string{
		"allowedUnsafeSysctls":            "allowed-unsafe-sysctls",
		"clusterDomain":                   "cluster-domain",
		"containerLogMaxFiles":            "container-log-max-files",
		"containerLogMaxSize":             "container-log-max-size",
		"containerLogMaxWorkers":          "container-log-max-workers",
		"containerLogMonitorInterval":     "container-log-monitor-interval",
		"cpuManagerPolicy":                "cpu-manager-policy",
		"cpuManagerReconcilePeriod":       "cpu-manager-reconcile-period",
		"eventBurst":                      "event-burst",
		"eventRecordQPS":                  "event-qps",
		"imageMaximumGCAge":               "image-maximum-gc-age",
		"imageMinimumGCAge":               "image-minimum-gc-age",
		"kubeAPIBurst":                    "kube-api-burst",
		"kubeAPIQPS":                      "kube-api-qps",
		"maxParallelImagePulls":           "max-parallel-image-pulls",
		"podPidsLimit":                    "pod-pids-limit",
		"registryBurst":                   "registry-burst",
		"registryPullQPS":                 "registry-qps",
		"reservedSystemCPUs":              "reserved-cpus",
		"seccompDefault":                  "seccomp-default",
		"serverTLSBootstrap":              "server-tls-bootstrap",
		"shutdownGracePeriod":             "shutdown-grace-period",
		"shutdownGracePeriodCriticalPods": "shutdown-grace-period-for-critical-pods",
		"singleProcessOOMKill":            "single-process-oom-kill",
		"topologyManagerPolicy":           "topology-manager-policy",
		"topologyManagerScope":            "topology-manager-scope",
	}
}

// bottlerocketKubeletValue is the settings.kubernetes key and TOML value of a kubelet field of
// Other, or an error when Bottlerocket has no setting that renders it as given.
func bottlerocketKubeletValue(name string, raw []byte) (bottlerocketSetting, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return bottlerocketSetting{}, err
	}
	if key, ok := bottlerocketKubeletKeys()[name]; ok {
		value, err := tomlValue(v)
		return bottlerocketSetting{key: key, value: value}, err
	}
	switch name {
	case "cpuManagerPolicyOptions":
		// The kubelet takes a map of option to "true"; Bottlerocket a list of the options it
		// knows, each rendered as "true".
		options, ok := v.(map[string]any)
		if !ok {
			return bottlerocketSetting{}, fmt.Errorf("not an object")
		}
		var list []string
		for _, option := range slices.Sorted(maps.Keys(options)) {
			if options[option] != "true" || !slices.Contains([]string{"full-pcpus-only", "strict-cpu-reservation", "distribute-cpus-across-numa"}, option) {
				return bottlerocketSetting{}, fmt.Errorf("option %s=%v has no Bottlerocket setting", option, options[option])
			}
			list = append(list, option)
		}
		return bottlerocketSetting{key: "cpu-manager-policy-options", value: tomlStrings(list)}, nil
	case "memorySwap":
		// Bottlerocket renders memorySwap.swapBehavior only.
		swap, ok := v.(map[string]any)
		behavior, isString := swap["swapBehavior"].(string)
		if !ok || len(swap) != 1 || !isString {
			return bottlerocketSetting{}, fmt.Errorf("only swapBehavior has a Bottlerocket setting")
		}
		return bottlerocketSetting{key: "memory-swap-behavior", value: behavior}, nil
	}
	return bottlerocketSetting{}, fmt.Errorf("no Bottlerocket setting renders kubelet %s", name)
}

// bottlerocketSetting is one settings.kubernetes key and its TOML value.
type bottlerocketSetting struct {
	key   string
	value any
}

// tomlValue is a JSON scalar or list of scalars as go-toml writes it: whole numbers as int64.
func tomlValue(v any) (any, error) {
	switch v := v.(type) {
	case string, bool:
		return v, nil
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
		return v, nil
	case []any:
		out := make([]any, 0, len(v))
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("a list of other than strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %T", v)
}
