package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// spec.kubelet is open to every field of the kubelet's configuration, as in Karpenter v1.15
// (aws/karpenter-provider-aws#8742): the CRD keeps fields it does not declare
// (x-kubernetes-preserve-unknown-fields), and KubeletConfiguration reads them into Other. The API
// server cannot see undeclared fields from CEL, so Joiner checks them itself (ValidateOther) and
// reports what it refuses on the EC2NodeClass's ValidationSucceeded condition, as upstream does.

// kubeletKind is the JSON type of a kubelet configuration field.
type kubeletKind string

const (
	kubeletKindArray    kubeletKind = "a list"
	kubeletKindBoolean  kubeletKind = "a boolean"
	kubeletKindDuration kubeletKind = "a duration such as 30s or 1m30s"
	kubeletKindInteger  kubeletKind = "an integer"
	kubeletKindNumber   kubeletKind = "a number"
	kubeletKindObject   kubeletKind = "an object"
	kubeletKindString   kubeletKind = "a string"
)

// kubeletFieldKind is the JSON type of a field of the kubelet's KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1, Kubernetes 1.33), by its JSON name; false for a name that is
// not a field of it. kind and apiVersion are not fields: Joiner writes the document around them.
func kubeletFieldKind(name string) (kubeletKind, bool) {
	switch name {
	case "allowedUnsafeSysctls", "clusterDNS", "enforceNodeAllocatable",
		"preloadedImagesVerificationAllowlist", "registerWithTaints", "reservedMemory",
		"shutdownGracePeriodByPodPriority", "tlsCipherSuites":
		return kubeletKindArray, true
	case "cgroupsPerQOS", "cpuCFSQuota", "enableContentionProfiling",
		"enableControllerAttachDetach", "enableDebugFlagsHandler",
		"enableDebuggingHandlers", "enableProfilingHandler", "enableServer",
		"enableSystemLogHandler", "enableSystemLogQuery", "failCgroupV1", "failSwapOn",
		"kernelMemcgNotification", "localStorageCapacityIsolation",
		"makeIPTablesUtilChains", "mergeDefaultEvictionSettings",
		"protectKernelDefaults", "registerNode", "rotateCertificates", "runOnce",
		"seccompDefault", "serializeImagePulls", "serverTLSBootstrap",
		"singleProcessOOMKill":
		return kubeletKindBoolean, true
	case "containerLogMonitorInterval", "cpuCFSQuotaPeriod", "cpuManagerReconcilePeriod",
		"evictionPressureTransitionPeriod", "fileCheckFrequency", "httpCheckFrequency",
		"imageMaximumGCAge", "imageMinimumGCAge", "nodeStatusReportFrequency",
		"nodeStatusUpdateFrequency", "runtimeRequestTimeout", "shutdownGracePeriod",
		"shutdownGracePeriodCriticalPods", "streamingConnectionIdleTimeout",
		"syncFrequency", "volumeStatsAggPeriod":
		return kubeletKindDuration, true
	case "containerLogMaxFiles", "containerLogMaxWorkers", "eventBurst", "eventRecordQPS",
		"evictionMaxPodGracePeriod", "healthzPort", "imageGCHighThresholdPercent",
		"imageGCLowThresholdPercent", "iptablesDropBit", "iptablesMasqueradeBit",
		"kubeAPIBurst", "kubeAPIQPS", "maxOpenFiles", "maxParallelImagePulls", "maxPods",
		"nodeLeaseDurationSeconds", "nodeStatusMaxImages", "oomScoreAdj", "podPidsLimit",
		"podsPerCore", "port", "readOnlyPort", "registryBurst", "registryPullQPS":
		return kubeletKindInteger, true
	case "memoryThrottlingFactor":
		return kubeletKindNumber, true
	case "authentication", "authorization", "cpuManagerPolicyOptions", "crashLoopBackOff",
		"evictionHard", "evictionMinimumReclaim", "evictionSoft",
		"evictionSoftGracePeriod", "featureGates", "kubeReserved", "logging",
		"memorySwap", "qosReserved", "staticPodURLHeader", "systemReserved",
		"topologyManagerPolicyOptions", "tracing", "userNamespaces":
		return kubeletKindObject, true
	case "address", "cgroupDriver", "cgroupRoot", "clusterDomain",
		"configMapAndSecretChangeDetectionStrategy", "containerLogMaxSize",
		"containerRuntimeEndpoint", "contentType", "cpuManagerPolicy", "hairpinMode",
		"healthzBindAddress", "imagePullCredentialsVerificationPolicy",
		"imageServiceEndpoint", "kubeReservedCgroup", "kubeletCgroups",
		"memoryManagerPolicy", "podCIDR", "podLogsDir", "providerID",
		"reservedSystemCPUs", "resolvConf", "showHiddenMetricsForVersion",
		"staticPodPath", "staticPodURL", "systemCgroups", "systemReservedCgroup",
		"tlsCertFile", "tlsMinVersion", "tlsPrivateKeyFile", "topologyManagerPolicy",
		"topologyManagerScope", "volumePluginDir":
		return kubeletKindString, true
	}
	return "", false
}

// KubeletOwnedFields are the kubelet fields Joiner sets itself on every family, with the reason:
// a value in spec.kubelet would be overwritten at bootstrap, so it is refused instead.
func KubeletOwnedFields() map[string]string {
	return map[string]string{
		"registerWithTaints": "Joiner sets it from the NodeClaim's taints and startup taints, with karpenter.sh/unregistered:NoExecute; put taints on the NodePool",
	}
}

// declaredKubeletFields are the JSON names of KubeletConfiguration's declared fields.
func declaredKubeletFields() []string {
	t := reflect.TypeFor[KubeletConfiguration]()
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// kubeletDeclared is KubeletConfiguration without its methods, to read and write the declared
// fields with encoding/json.
type kubeletDeclared KubeletConfiguration

// UnmarshalJSON reads the declared fields into their fields and every other field into Other.
func (in *KubeletConfiguration) UnmarshalJSON(data []byte) error {
	var declared kubeletDeclared
	if err := json.Unmarshal(data, &declared); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	for _, name := range declaredKubeletFields() {
		delete(all, name)
	}
	declared.Other = nil
	if len(all) > 0 {
		declared.Other = make(map[string]apiextensionsv1.JSON, len(all))
		for name, raw := range all {
			declared.Other[name] = apiextensionsv1.JSON{Raw: bytes.Clone(raw)}
		}
	}
	*in = KubeletConfiguration(declared)
	return nil
}

// MarshalJSON writes the declared fields and Other's as one object. A name in Other that is also
// a declared field is written from the declared field.
func (in KubeletConfiguration) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(kubeletDeclared(in))
	if err != nil || len(in.Other) == 0 {
		return data, err
	}
	all := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for name, value := range in.Other {
		if _, ok := all[name]; ok || slices.Contains(declaredKubeletFields(), name) {
			continue
		}
		raw := value.Raw
		if len(raw) == 0 {
			raw = []byte("null")
		}
		all[name] = raw
	}
	return json.Marshal(all)
}

// ValidateOther checks the undeclared fields of spec.kubelet against the kubelet's
// configuration: each must be one of its fields (by its exact JSON name), with a value of the
// field's JSON type, and not one Joiner sets itself (KubeletOwnedFields). It returns one message
// per refused field, in name order, each naming the field and the fix. Whether an AMI family
// can pass a valid field to its bootstrap is pkg/aws/userdata's check.
func (in *KubeletConfiguration) ValidateOther() []string {
	if in == nil {
		return nil
	}
	var problems []string
	owned := KubeletOwnedFields()
	for _, name := range slices.Sorted(maps.Keys(in.Other)) {
		if reason, ok := owned[name]; ok {
			problems = append(problems, fmt.Sprintf("spec.kubelet.%s cannot be set: %s", name, reason))
			continue
		}
		kind, ok := kubeletFieldKind(name)
		if !ok {
			problems = append(problems, fmt.Sprintf("spec.kubelet.%s is not a field of the kubelet's configuration (kubelet.config.k8s.io/v1beta1): correct its name (names are case-sensitive) or remove it", name))
			continue
		}
		if !kind.matches(in.Other[name].Raw) {
			problems = append(problems, fmt.Sprintf("spec.kubelet.%s must be %s, as the kubelet's configuration types it: correct the value", name, kind))
		}
	}
	return problems
}

// matches reports whether a JSON value has the kind's type. null is no value of any kind.
func (k kubeletKind) matches(raw []byte) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false
	}
	switch k {
	case kubeletKindArray:
		_, ok := v.([]any)
		return ok
	case kubeletKindBoolean:
		_, ok := v.(bool)
		return ok
	case kubeletKindDuration:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := time.ParseDuration(s)
		return err == nil
	case kubeletKindInteger:
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case kubeletKindNumber:
		_, ok := v.(float64)
		return ok
	case kubeletKindObject:
		_, ok := v.(map[string]any)
		return ok
	case kubeletKindString:
		_, ok := v.(string)
		return ok
	}
	return false
}
