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

// isKubeletBoolFlag reports whether a kubelet flag takes no separate value word.
func isKubeletBoolFlag(name string) bool {
	switch name {
	case "register-node", "register-schedulable", "fail-swap-on", "exit-on-lock-contention",
		"help", "enable-server", "enable-debugging-handlers", "seccomp-default", "rotate-certificates",
		"rotate-server-certificates", "protect-kernel-defaults", "cgroups-per-qos", "enable-controller-attach-detach",
		"make-iptables-util-chains", "serialize-image-pulls", "logtostderr", "alsologtostderr", "skip-headers":
		return true
	}
	return false
}

// kubeletFlagRemovedIn returns the kubelet minor version from which a flag that once worked in
// userData is rejected as unknown, stopping the kubelet; 0 for flags still accepted.
func kubeletFlagRemovedIn(name string) int {
	switch name {
	case "network-plugin", "cni-bin-dir", "cni-conf-dir", "cni-cache-dir", "docker-endpoint",
		"image-pull-progress-deadline", "network-plugin-mtu": // dockershim removal
		return 24
	case "logtostderr", "alsologtostderr", "log-dir", "log-file", "log-file-max-size", "skip-headers",
		"skip-log-headers", "one-output", "stderrthreshold", "add-dir-header": // klog flags
		return 26
	case "container-runtime": // the only runtime left is remote
		return 27
	}
	return 0
}

// kubeletMayLabel reports whether the kubelet may set a kubernetes.io or k8s.io label on its own
// Node (the NodeRestriction rules the kubelet checks at startup).
func kubeletMayLabel(key string) bool {
	if strings.HasPrefix(key, "kubelet.kubernetes.io/") || strings.HasPrefix(key, "node.kubernetes.io/") {
		return true
	}
	switch key {
	case "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
		"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
		"kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "topology.kubernetes.io/zone":
		return true
	}
	return false
}

// applyKubelet starts from the config file and applies the command line on top, as the kubelet
// does: a flag overrides the config field of the same meaning, --register-with-taints replaces
// the whole list each time it appears, --node-labels adds to the labels each time (later keys
// win). It returns the kubelet's own error message when the kubelet would exit at startup.
//
// Flags the kubelet of minor version kubeletMinor no longer has (kubeletFlagRemovedIn) stop it
// as unknown flags; kubeletMinor 0 means unknown, and then no flag is refused.
//
// Approximation: a flag written "--name value" takes the next word as its value unless the flag
// is a known boolean; the kubelet's full flag table is not modelled, and other unknown flags are
// accepted and kept in ExtraFlags.
func applyKubelet(reg *KubeletRegistration, cfg kubeletConfig, args []string, kubeletMinor int) error {
	reg.ClusterDNS = cfg.ClusterDNS
	reg.MaxPods = cfg.MaxPods
	reg.Taints = cfg.RegisterWithTaints
	reg.KubeletArgs = slices.Clone(args)
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
		if removedIn := kubeletFlagRemovedIn(name); removedIn > 0 && kubeletMinor >= removedIn {
			return fmt.Errorf("failed to parse kubelet flag: unknown flag: --%s", name)
		}
		isBool := !hasValue && isKubeletBoolFlag(name)
		if !hasValue && !isBool {
			if i+1 >= len(args) {
				return fmt.Errorf("failed to parse kubelet flag: flag needs an argument: %s", arg)
			}
			i++
			value = args[i]
		}
		if err := applyKubeletFlag(reg, name, value); err != nil {
			return fmt.Errorf("failed to parse kubelet flag: invalid argument %q for \"--%s\" flag: %w", value, name, err)
		}
		switch {
		case slices.Contains([]string{"node-labels", "register-with-taints", "max-pods", "cluster-dns", "hostname-override"}, name):
		case isBool:
			reg.ExtraFlags = append(reg.ExtraFlags, "--"+name)
		default:
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
	case "hostname-override":
		reg.HostnameOverride = strings.ToLower(strings.TrimSpace(value))
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
		if !restricted || kubeletMayLabel(k) {
			continue
		}
		bad = append(bad, k)
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v\n"+
		"--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone)",
		bad)
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

// minorVersion reads the minor version of "1.33" or "v1.33.2-eks"; 0 when it cannot.
func minorVersion(v string) int {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 {
		return 0
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0
	}
	return n
}
