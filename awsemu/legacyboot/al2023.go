package legacyboot

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// nodeConfig is the part of nodeadm's node.eks.aws/v1alpha1 NodeConfig the emulator reads.
type nodeConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Cluster struct {
			Name              string `json:"name"`
			APIServerEndpoint string `json:"apiServerEndpoint"`
		} `json:"cluster"`
		Kubelet struct {
			Config map[string]any `json:"config"`
			Flags  []string       `json:"flags"`
		} `json:"kubelet"`
	} `json:"spec"`
}

// interpretAL2023 merges the NodeConfig documents of the userData in order, as nodeadm does:
// scalar fields and kubelet config keys of later documents win, and a later non-empty flags list
// replaces the earlier one.
func interpretAL2023(ps []part, res *Result) error {
	var merged nodeConfig
	merged.Spec.Kubelet.Config = map[string]any{}
	found := false
	for _, p := range ps {
		if p.contentType != "application/node.eks.aws" {
			res.logf("nodeadm: skipping part of type %s", p.contentType)
			continue
		}
		for _, doc := range strings.Split(p.body, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var nc nodeConfig
			if err := yaml.Unmarshal([]byte(doc), &nc); err != nil {
				return fmt.Errorf("nodeadm: could not parse NodeConfig: %w", err)
			}
			if nc.Kind != "NodeConfig" {
				return fmt.Errorf("nodeadm: unsupported kind %q", nc.Kind)
			}
			found = true
			mergeNodeConfig(&merged, nc)
		}
	}
	if !found {
		return fmt.Errorf("nodeadm: no NodeConfig in userData: the kubelet is not started")
	}
	if merged.Spec.Cluster.Name == "" || merged.Spec.Cluster.APIServerEndpoint == "" {
		return fmt.Errorf("nodeadm: validating NodeConfig: Name and APIServerEndpoint are required")
	}
	k := &Kubelet{ClusterName: merged.Spec.Cluster.Name, APIServerEndpoint: merged.Spec.Cluster.APIServerEndpoint, Flags: merged.Spec.Kubelet.Flags}
	if err := configToKubelet(merged.Spec.Kubelet.Config, k); err != nil {
		return err
	}
	res.logf("nodeadm: kubelet flags: %s", strings.Join(k.Flags, " "))
	// Flags override the config file, as for the kubelet itself.
	if err := k.applyFlags(k.Flags); err != nil {
		return err
	}
	res.Kubelet = k
	return nil
}

func mergeNodeConfig(dst *nodeConfig, src nodeConfig) {
	if src.Spec.Cluster.Name != "" {
		dst.Spec.Cluster.Name = src.Spec.Cluster.Name
	}
	if src.Spec.Cluster.APIServerEndpoint != "" {
		dst.Spec.Cluster.APIServerEndpoint = src.Spec.Cluster.APIServerEndpoint
	}
	for k, v := range src.Spec.Kubelet.Config {
		dst.Spec.Kubelet.Config[k] = v
	}
	if len(src.Spec.Kubelet.Flags) > 0 {
		dst.Spec.Kubelet.Flags = src.Spec.Kubelet.Flags
	}
}

// configToKubelet reads the KubeletConfiguration keys the emulator acts on.
func configToKubelet(cfg map[string]any, k *Kubelet) error {
	if v, ok := cfg["maxPods"].(float64); ok {
		k.MaxPods = ptr(int32(v))
	}
	if dns, ok := cfg["clusterDNS"].([]any); ok {
		for _, d := range dns {
			k.ClusterDNS = append(k.ClusterDNS, fmt.Sprint(d))
		}
	}
	if taints, ok := cfg["registerWithTaints"]; ok {
		raw, err := yaml.Marshal(taints)
		if err != nil {
			return fmt.Errorf("nodeadm: registerWithTaints, %w", err)
		}
		if err := yaml.Unmarshal(raw, &k.Taints); err != nil {
			return fmt.Errorf("nodeadm: registerWithTaints, %w", err)
		}
	}
	return nil
}
