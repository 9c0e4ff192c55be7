package boot

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// kubeletConfig is the part of a KubeletConfiguration file that decides registration.
type kubeletConfig struct {
	ClusterDNS         []string
	MaxPods            int32
	RegisterWithTaints []corev1.Taint
}

// kubeletBoolFlags are kubelet flags that take no separate value word.
var kubeletBoolFlags = []string{
	"register-node", "register-schedulable", "fail-swap-on", "exit-on-lock-contention",
	"help", "version", "logtostderr", "alsologtostderr", "skip-headers", "enable-server",
	"enable-debugging-handlers", "read-only-port", "seccomp-default", "rotate-certificates",
}

// kubeletAllowedLabelPrefixes and kubeletAllowedLabels are the kubernetes.io / k8s.io labels a
// kubelet may set on its own Node (the NodeRestriction rules the kubelet checks at startup).
var (
	kubeletAllowedLabelPrefixes = []string{"kubelet.kubernetes.io/", "node.kubernetes.io/"}
	kubeletAllowedLabels        = []string{
		"beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
	}
)

// applyKubelet starts from the config file and applies the command line on top, as the kubelet
// does: a flag overrides the config field of the same meaning, --register-with-taints replaces
// the whole list each time it appears, --node-labels adds to the labels each time (later keys
// win). It returns the kubelet's own error message when the kubelet would exit at startup.
//
// Approximation: a flag written "--name value" takes the next word as its value unless the flag
// is a known boolean; the kubelet's full flag table is not modelled.
func applyKubelet(reg *KubeletRegistration, cfg kubeletConfig, args []string) error {
	reg.ClusterDNS = cfg.ClusterDNS
	reg.MaxPods = cfg.MaxPods
	reg.Taints = cfg.RegisterWithTaints
	if reg.Labels == nil {
		reg.Labels = map[string]string{}
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if i+1 < len(args) {
				return fmt.Errorf("unknown command %s", args[i+1])
			}
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return fmt.Errorf("unknown command %s", arg)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !hasValue && !slices.Contains(kubeletBoolFlags, name) {
			if i+1 >= len(args) {
				return fmt.Errorf("failed to parse kubelet flag: flag needs an argument: %s", arg)
			}
			i++
			value = args[i]
		}
		if err := applyKubeletFlag(reg, name, value); err != nil {
			return fmt.Errorf("failed to parse kubelet flag: invalid argument %q for \"--%s\" flag: %w", value, name, err)
		}
		if !slices.Contains([]string{"node-labels", "register-with-taints", "max-pods", "cluster-dns"}, name) {
			reg.ExtraFlags = append(reg.ExtraFlags, "--"+name+"="+value)
		}
	}
	return checkNodeLabels(reg.Labels)
}

func applyKubeletFlag(reg *KubeletRegistration, name, value string) error {
	switch name {
	case "node-labels":
		return addLabels(reg.Labels, value)
	case "register-with-taints":
		taints, err := parseTaints(value)
		if err != nil {
			return err
		}
		reg.Taints = taints
	case "max-pods":
		n, err := strconv.ParseInt(value, 0, 32)
		if err != nil {
			return err
		}
		reg.MaxPods = int32(n)
	case "cluster-dns":
		reg.ClusterDNS = nil
		for ip := range strings.SplitSeq(value, ",") {
			if net.ParseIP(strings.TrimSpace(ip)) == nil {
				return fmt.Errorf("invalid IP address %q", ip)
			}
			reg.ClusterDNS = append(reg.ClusterDNS, strings.TrimSpace(ip))
		}
	}
	return nil
}

// addLabels applies one --node-labels value: comma-separated key=value pairs.
func addLabels(labels map[string]string, value string) error {
	if value == "" {
		return nil
	}
	for pair := range strings.SplitSeq(value, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("malformed pair, expect string=string")
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("invalid label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("invalid label value %q: %s", v, strings.Join(errs, "; "))
		}
		labels[k] = v
	}
	return nil
}

// checkNodeLabels refuses kubernetes.io and k8s.io labels that a kubelet may not set on itself.
func checkNodeLabels(labels map[string]string) error {
	var bad []string
	for k := range labels {
		domain, _, ok := strings.Cut(k, "/")
		if !ok {
			continue
		}
		restricted := domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") ||
			domain == "k8s.io" || strings.HasSuffix(domain, ".k8s.io")
		if !restricted || slices.Contains(kubeletAllowedLabels, k) ||
			slices.ContainsFunc(kubeletAllowedLabelPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		bad = append(bad, k)
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n"+
		"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
		bad, strings.Join(kubeletAllowedLabelPrefixes, ", "), strings.Join(kubeletAllowedLabels, ", "))
}

// parseTaints reads a --register-with-taints value: comma-separated key[=value]:Effect.
func parseTaints(value string) ([]corev1.Taint, error) {
	if value == "" {
		return nil, nil
	}
	var taints []corev1.Taint
	for spec := range strings.SplitSeq(value, ",") {
		t, err := parseTaint(spec)
		if err != nil {
			return nil, err
		}
		taints = append(taints, t)
	}
	return taints, nil
}

func parseTaint(spec string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(spec, ":")
	if !ok || strings.Contains(effect, ":") {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v", spec)
	}
	t := corev1.Taint{Effect: corev1.TaintEffect(effect)}
	if !slices.Contains([]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}, t.Effect) {
		return corev1.Taint{}, fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
	}
	t.Key, t.Value, _ = strings.Cut(kv, "=")
	if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
		return corev1.Taint{}, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(errs, "; "))
	}
	return t, nil
}

// hasTaint reports whether taints holds one with key and effect.
func hasTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == effect })
}
