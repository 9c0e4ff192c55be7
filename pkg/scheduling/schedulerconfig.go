package scheduling

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// SystemDefaultConstraints are kube-scheduler's built-in default spreads (PodTopologySpread
// defaultingType System): hostname with maxSkew 3 and zone with maxSkew 5, both ScheduleAnyway.
func SystemDefaultConstraints() []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{
		{MaxSkew: 3, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway},
		{MaxSkew: 5, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway},
	}
}

// karpenterSchedulerConfig is the document of Karpenter's --scheduler-config (SCHEDULER_CONFIG).
type karpenterSchedulerConfig struct {
	PodTopologySpread *struct {
		DefaultConstraints []corev1.TopologySpreadConstraint `json:"defaultConstraints,omitempty"`
	} `json:"podTopologySpread,omitempty"`
}

// kubeSchedulerConfig is the part of a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1)
// that default spreads come from; every other field is left to kube-scheduler.
type kubeSchedulerConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Profiles   []struct {
		SchedulerName string `json:"schedulerName"`
		PluginConfig  []struct {
			Name string `json:"name"`
			Args struct {
				DefaultConstraints []corev1.TopologySpreadConstraint `json:"defaultConstraints"`
				DefaultingType     string                            `json:"defaultingType"`
			} `json:"args"`
		} `json:"pluginConfig"`
	} `json:"profiles"`
}

// ParseSchedulerConfig returns the default topology spread constraints of a scheduler
// configuration document, validated (ValidateDefaultConstraints); nil when it sets none. Two
// forms are read:
//   - Karpenter's --scheduler-config document, `podTopologySpread: {defaultConstraints: [...]}`,
//     strictly (an unknown field is an error, as upstream);
//   - a kube-scheduler KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1):
//     the PodTopologySpread args of the default-scheduler profile, as kube-scheduler reads them:
//     defaultingType System (the default) means SystemDefaultConstraints and must come without
//     defaultConstraints, List means the listed ones. A profile without those args, or no
//     default-scheduler profile, means System.
func ParseSchedulerConfig(data []byte) ([]corev1.TopologySpreadConstraint, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decoding scheduler config, %w", err)
	}
	if head.Kind == "" {
		var c karpenterSchedulerConfig
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return nil, fmt.Errorf("decoding scheduler config (podTopologySpread.defaultConstraints, or a KubeSchedulerConfiguration with its kind), %w", err)
		}
		if c.PodTopologySpread == nil {
			return nil, nil
		}
		if err := ValidateDefaultConstraints(c.PodTopologySpread.DefaultConstraints); err != nil {
			return nil, fmt.Errorf("validating scheduler config, podTopologySpread.%w", err)
		}
		return c.PodTopologySpread.DefaultConstraints, nil
	}
	var c kubeSchedulerConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decoding KubeSchedulerConfiguration, %w", err)
	}
	if c.Kind != "KubeSchedulerConfiguration" || c.APIVersion != "kubescheduler.config.k8s.io/v1" {
		return nil, fmt.Errorf("reading scheduler config: kind %q of %q is not KubeSchedulerConfiguration of kubescheduler.config.k8s.io/v1", c.Kind, c.APIVersion)
	}
	for i, p := range c.Profiles {
		if p.SchedulerName != "" && p.SchedulerName != corev1.DefaultSchedulerName {
			continue
		}
		for j, pc := range p.PluginConfig {
			if pc.Name != "PodTopologySpread" {
				continue
			}
			at := fmt.Sprintf("profiles[%d].pluginConfig[%d].args", i, j)
			switch pc.Args.DefaultingType {
			case "", "System":
				if len(pc.Args.DefaultConstraints) > 0 {
					return nil, fmt.Errorf("validating KubeSchedulerConfiguration, %s.defaultConstraints must be empty when defaultingType is System (set defaultingType: List)", at)
				}
				return SystemDefaultConstraints(), nil
			case "List":
				if err := ValidateDefaultConstraints(pc.Args.DefaultConstraints); err != nil {
					return nil, fmt.Errorf("validating KubeSchedulerConfiguration, %s.%w", at, err)
				}
				return pc.Args.DefaultConstraints, nil
			default:
				return nil, fmt.Errorf("validating KubeSchedulerConfiguration, %s.defaultingType is %q, must be System or List", at, pc.Args.DefaultingType)
			}
		}
		break
	}
	return SystemDefaultConstraints(), nil
}
