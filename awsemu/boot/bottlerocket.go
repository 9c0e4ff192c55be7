package boot

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pelletier/go-toml/v2"
)

const earlyBootConfig = "early-boot-config[1012]: "

// interpretBottlerocket reads the userData as Bottlerocket's TOML settings. Only
// settings.kubernetes matters here; every other setting is accepted and ignored. A document that
// is not TOML, or a kubernetes setting of the wrong shape, is refused as a whole and the
// kubelet never gets its cluster settings.
func interpretBottlerocket(in Instance) (*kubeletLaunch, *BootError) {
	console := []string{earlyBootConfig + "Reading user data from IMDS"}
	var settings map[string]any
	if err := toml.Unmarshal(in.UserData, &settings); err != nil {
		console = append(console,
			earlyBootConfig+fmt.Sprintf("Error: Unable to deserialize user data as TOML: %v", err),
			systemd+"early-boot-config.service: Main process exited, code=exited, status=1/FAILURE")
		return nil, bootErrorf(ReasonUserDataInvalid, console, "userData is not valid TOML: %v", err)
	}
	refuse := func(format string, args ...any) *BootError {
		msg := fmt.Sprintf(format, args...)
		console = append(console,
			earlyBootConfig+fmt.Sprintf("Error: Failed to set settings: %s", msg),
			systemd+"early-boot-config.service: Main process exited, code=exited, status=1/FAILURE")
		return bootErrorf(ReasonUserDataInvalid, console, "Bottlerocket refused the settings: %s", msg)
	}
	k8s, _ := lookupTable(settings, "settings", "kubernetes")
	launch := &kubeletLaunch{reg: KubeletRegistration{Labels: map[string]string{}}}
	var ok bool
	if launch.reg.ClusterName, ok = optionalString(k8s, "cluster-name"); !ok {
		return nil, refuse("settings.kubernetes.cluster-name must be a string")
	}
	if launch.reg.APIServerEndpoint, ok = optionalString(k8s, "api-server"); !ok {
		return nil, refuse("settings.kubernetes.api-server must be a string")
	}
	caB64, ok := optionalString(k8s, "cluster-certificate")
	if !ok {
		return nil, refuse("settings.kubernetes.cluster-certificate must be a string")
	}
	ca, err := base64.StdEncoding.DecodeString(caB64)
	if err != nil {
		return nil, refuse("settings.kubernetes.cluster-certificate is not base64: %v", err)
	}
	launch.reg.CertificateAuthority = string(ca)
	if err := bottlerocketLabels(k8s, launch.reg.Labels); err != nil {
		return nil, refuse("%v", err)
	}
	if launch.config.RegisterWithTaints, err = bottlerocketTaints(k8s); err != nil {
		return nil, refuse("%v", err)
	}
	launch.config.MaxPods = in.ENIMaxPods
	if v, present := k8s["max-pods"]; present {
		n, isInt := v.(int64)
		if !isInt || n <= 0 {
			return nil, refuse("settings.kubernetes.max-pods must be a positive integer, got %v", v)
		}
		launch.config.MaxPods = int32(n)
	}
	launch.config.ClusterDNS = []string{defaultDNSForVPC(in.VPCCIDR)}
	switch v := k8s["cluster-dns-ip"].(type) {
	case nil:
	case string:
		launch.config.ClusterDNS = []string{v}
	case []any:
		launch.config.ClusterDNS = nil
		for _, ip := range v {
			s, isString := ip.(string)
			if !isString {
				return nil, refuse("settings.kubernetes.cluster-dns-ip must hold strings")
			}
			launch.config.ClusterDNS = append(launch.config.ClusterDNS, s)
		}
	default:
		return nil, refuse("settings.kubernetes.cluster-dns-ip must be a string or a list of strings")
	}
	for _, required := range []struct{ name, value string }{
		{"cluster-name", launch.reg.ClusterName}, {"api-server", launch.reg.APIServerEndpoint}, {"cluster-certificate", caB64},
	} {
		if required.value == "" {
			console = append(console,
				systemd+fmt.Sprintf("Condition check resulted in Kubelet being skipped: settings.kubernetes.%s is not set.", required.name))
			return nil, bootErrorf(ReasonBootstrapFailed, console, "settings.kubernetes.%s is not set, so the kubelet never starts", required.name)
		}
	}
	launch.reg.LocalDisksRAID0 = bottlerocketInitsEphemeralStorage(settings)
	console = append(console, earlyBootConfig+"Successfully set user data settings", systemd+"Finished settings-applier.service")
	launch.console = console
	return launch, nil
}

// bottlerocketInitsEphemeralStorage says whether a bootstrap command runs apiclient
// ephemeral-storage init, which makes a RAID-0 array of the instance-store disks (its default),
// before the kubelet starts.
func bottlerocketInitsEphemeralStorage(settings map[string]any) bool {
	commands, _ := lookupTable(settings, "settings", "bootstrap-commands")
	for _, c := range commands {
		table, _ := c.(map[string]any)
		list, _ := table["commands"].([]any)
		for _, cmd := range list {
			words, _ := cmd.([]any)
			if len(words) >= 3 && words[0] == "apiclient" && words[1] == "ephemeral-storage" && words[2] == "init" {
				return true
			}
		}
	}
	return false
}

func lookupTable(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return map[string]any{}, false
		}
		m = next
	}
	return m, true
}

// optionalString returns the string at key, "" when absent, and false when it is not a string.
func optionalString(m map[string]any, key string) (string, bool) {
	v, present := m[key]
	if !present {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

func bottlerocketLabels(k8s map[string]any, labels map[string]string) error {
	raw, present := k8s["node-labels"]
	if !present {
		return nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("settings.kubernetes.node-labels must be a table")
	}
	for k, v := range table {
		s, isString := v.(string)
		if !isString {
			return fmt.Errorf("settings.kubernetes.node-labels.%q must be a string", k)
		}
		if err := addLabels(labels, k+"="+s); err != nil {
			return fmt.Errorf("settings.kubernetes.node-labels.%q: %w", k, err)
		}
	}
	return nil
}

// bottlerocketTaints reads node-taints: key = ["value:Effect", ...] (or a single string);
// ":Effect" and a bare "Effect" have an empty value.
func bottlerocketTaints(k8s map[string]any) ([]corev1.Taint, error) {
	raw, present := k8s["node-taints"]
	if !present {
		return nil, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("settings.kubernetes.node-taints must be a table")
	}
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var taints []corev1.Taint
	for _, k := range keys {
		var values []string
		switch v := table[k].(type) {
		case string:
			values = []string{v}
		case []any:
			for _, x := range v {
				s, isString := x.(string)
				if !isString {
					return nil, fmt.Errorf("settings.kubernetes.node-taints.%q must hold strings", k)
				}
				values = append(values, s)
			}
		default:
			return nil, fmt.Errorf("settings.kubernetes.node-taints.%q must be a list of \"value:Effect\" strings", k)
		}
		for _, ve := range values {
			value, effect, ok := strings.Cut(ve, ":")
			if !ok {
				// A bare effect is read as an empty value; whether Bottlerocket accepts it is
				// not established, so it is accepted rather than failing working userData.
				value, effect = "", ve
			}
			spec := k + ":" + effect
			if value != "" {
				spec = k + "=" + value + ":" + effect
			}
			t, err := parseTaint(spec)
			if err != nil {
				return nil, fmt.Errorf("settings.kubernetes.node-taints.%q: %w", k, err)
			}
			taints = append(taints, t)
		}
	}
	return taints, nil
}

// defaultDNSForVPC is bootstrap.sh's fallback cluster DNS IP: 172.20.0.10 in a 10.x VPC,
// otherwise 10.100.0.10.
func defaultDNSForVPC(vpcCIDR string) string {
	if strings.HasPrefix(vpcCIDR, "10.") {
		return "172.20.0.10"
	}
	return "10.100.0.10"
}
