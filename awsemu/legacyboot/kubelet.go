package legacyboot

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Kubelet is what the kubelet of a booted instance was started with.
type Kubelet struct {
	ClusterName       string
	APIServerEndpoint string
	// Flags are the kubelet's command-line flags from userData, in order.
	Flags []string
	// Taints are registered with the Node (--register-with-taints or registerWithTaints).
	Taints []corev1.Taint
	// Labels are added to the Node (--node-labels).
	Labels map[string]string
	// MaxPods is set when userData sets it (--max-pods or maxPods); nil leaves the AMI default.
	MaxPods *int32
	// ClusterDNS is the kubelet's clusterDNS when userData sets it.
	ClusterDNS []string
}

// applyFlags reads the flags the emulator acts on. Later occurrences win, as with pflag.
func (k *Kubelet) applyFlags(flags []string) error {
	for i := 0; i < len(flags); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(flags[i], "-"), "=")
		if !strings.HasPrefix(flags[i], "-") {
			return fmt.Errorf("kubelet: unexpected argument %q", flags[i])
		}
		switch name {
		case "register-with-taints", "node-labels", "max-pods":
			if !hasValue {
				if i+1 >= len(flags) {
					return fmt.Errorf("kubelet: flag needs an argument: --%s", name)
				}
				value, i = flags[i+1], i+1
			}
		default:
			if !hasValue && i+1 < len(flags) && !strings.HasPrefix(flags[i+1], "-") {
				i++ // a flag with its value as the next word
			}
			continue
		}
		if err := k.applyFlag(name, value); err != nil {
			return err
		}
	}
	return nil
}

func (k *Kubelet) applyFlag(name, value string) error {
	switch name {
	case "register-with-taints":
		taints, err := parseTaints(value)
		if err != nil {
			return fmt.Errorf("kubelet: invalid argument %q for \"--register-with-taints\" flag: %w", value, err)
		}
		k.Taints = taints
	case "node-labels":
		labels, err := parseLabels(value)
		if err != nil {
			return fmt.Errorf("kubelet: invalid argument %q for \"--node-labels\" flag: %w", value, err)
		}
		k.Labels = labels
	case "max-pods":
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil {
			return fmt.Errorf("kubelet: invalid argument %q for \"--max-pods\" flag: %w", value, err)
		}
		k.MaxPods = ptr(int32(n))
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// parseTaints reads `key[=value]:Effect` items separated by commas, as the kubelet does.
func parseTaints(s string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		kv, effect, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("invalid taint spec: %v", item)
		}
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
		}
		key, value, _ := strings.Cut(kv, "=")
		if key == "" {
			return nil, fmt.Errorf("invalid taint spec: %v", item)
		}
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return out, nil
}

func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid label %q", item)
		}
		out[k] = v
	}
	return out, nil
}
