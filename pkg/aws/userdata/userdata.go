package userdata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Options are the inputs of a rendering.
type Options struct {
	// Family is the AMI family: awsv1.AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyBottlerocket or
	// AMIFamilyCustom. See FamilyOf.
	Family string
	// ClusterName is the EKS cluster's name.
	ClusterName string
	// ClusterEndpoint is the API server URL, https://...
	ClusterEndpoint string
	// CABundle is the cluster CA certificate, PEM, base64-encoded as EKS reports it.
	CABundle string
	// ClusterDNS is the cluster DNS Service IP. EC2NodeClass spec.kubelet.clusterDNS, when set,
	// takes precedence; when both are empty the AMI's default applies.
	ClusterDNS string
	// ClusterCIDR is the service CIDR (AL2023 needs it in spec.cluster.cidr).
	ClusterCIDR string
	// Labels of the NodeClaim. Those the kubelet may set on itself are passed to it; the others
	// (kubernetes.io and k8s.io domains the kubelet refuses, which would stop it from starting)
	// are left for Joiner to sync onto the Node at registration.
	Labels map[string]string
	// Taints and StartupTaints the node registers with. karpenter.sh/unregistered:NoExecute is
	// always added; the caller need not pass it.
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// MaxPods is the max pods of the instance type being launched, as scheduling computed it.
	// When nil, Kubelet.MaxPods applies, else the AMI's default.
	MaxPods *int32
	// Kubelet is the EC2NodeClass's spec.kubelet.
	Kubelet *awsv1.KubeletConfiguration
	// InstanceStorePolicy is the EC2NodeClass's spec.instanceStorePolicy; "" leaves
	// instance-store disks alone. RAID0 has the node stripe them into one array holding the
	// kubelet's and container runtime's state, each family with its own setting.
	InstanceStorePolicy awsv1.InstanceStorePolicy
	// UserData is the EC2NodeClass's spec.userData, the operator's part.
	UserData string
}

// Result is a rendered userData and what the operator should know about it.
type Result struct {
	// UserData is the document the instance boots with (not base64-encoded).
	UserData string
	// Warnings are problems and advice found in the operator's userData, in a stable order.
	Warnings []Warning
}

// Severity says whether a Warning means the node will not join as required.
type Severity string

const (
	// SeverityProblem means that, as written, the node will not register with the required taint
	// (or not register at all): it must be fixed.
	SeverityProblem Severity = "Problem"
	// SeverityAdvice means the node will work, but the operator should change something.
	SeverityAdvice Severity = "Advice"
)

// Warning is one finding about the operator's userData.
type Warning struct {
	// Severity is Problem or Advice.
	Severity Severity
	// Reason is a stable CamelCase identifier, for conditions and tests.
	Reason string
	// Message says what is wrong, where.
	Message string
	// Fix says what to change.
	Fix string
}

func (w Warning) String() string {
	return fmt.Sprintf("%s %s: %s Fix: %s", w.Severity, w.Reason, w.Message, w.Fix)
}

// Problems returns the warnings of severity Problem.
func (r *Result) Problems() []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Severity == SeverityProblem {
			out = append(out, w)
		}
	}
	return out
}

// Render renders the userData of one instance. It fails, with an error wrapped as
// "rendering userdata, ...", only when the operator's userData cannot be parsed in the family's
// format (so it cannot be merged), the family is unknown, or the result is over EC2's 16 KiB
// limit; everything else is a Warning.
func Render(opts Options) (*Result, error) {
	var (
		res *Result
		err error
	)
	// A kubelet field the family cannot pass is refused rather than dropped (see CheckKubelet).
	if reason, message := CheckKubelet(opts.Family, opts.Kubelet); reason != "" {
		return nil, fmt.Errorf("rendering userdata, %s", message)
	}
	switch opts.Family {
	case awsv1.AMIFamilyAL2:
		res, err = renderAL2(opts)
	case awsv1.AMIFamilyAL2023:
		res, err = renderAL2023(opts)
	case awsv1.AMIFamilyBottlerocket:
		res, err = renderBottlerocket(opts)
	case awsv1.AMIFamilyCustom:
		res = renderCustom(opts)
	default:
		err = fmt.Errorf("unknown AMI family %q: use AL2, AL2023, Bottlerocket or Custom", opts.Family)
	}
	if err != nil {
		return nil, fmt.Errorf("rendering userdata, %w", err)
	}
	if len(res.UserData) > MaxUserDataBytes {
		return nil, fmt.Errorf("rendering userdata, the rendered userData is %d bytes, over EC2's limit of %d: shorten spec.userData by at least %d bytes (move files to S3 or the AMI)",
			len(res.UserData), MaxUserDataBytes, len(res.UserData)-MaxUserDataBytes)
	}
	return res, nil
}

// MaxUserDataBytes is EC2's limit on userData, before base64 encoding.
const MaxUserDataBytes = 16 * 1024

// FamilyOf returns the AMI family of an EC2NodeClass: spec.amiFamily, or else the family its alias
// term implies. It returns "" when neither says.
func FamilyOf(nodeClass *awsv1.EC2NodeClass) string {
	if nodeClass.Spec.AMIFamily != nil {
		return *nodeClass.Spec.AMIFamily
	}
	for _, term := range nodeClass.Spec.AMISelectorTerms {
		family, _, _ := strings.Cut(term.Alias, "@")
		switch family {
		case awsv1.AliasFamilyAL2:
			return awsv1.AMIFamilyAL2
		case awsv1.AliasFamilyAL2023:
			return awsv1.AMIFamilyAL2023
		case awsv1.AliasFamilyBottlerocket:
			return awsv1.AMIFamilyBottlerocket
		}
	}
	return ""
}

// requiredTaints is the union of the NodeClaim's taints, its startup taints and
// karpenter.sh/unregistered:NoExecute, deduplicated by key and effect, sorted.
func (o Options) requiredTaints() []corev1.Taint {
	all := slices.Concat(o.Taints, o.StartupTaints, []corev1.Taint{v1.UnregisteredNoExecuteTaint()})
	return unionTaints(nil, all)
}

// clusterDNS is spec.kubelet.clusterDNS, else ClusterDNS, else nothing.
func (o Options) clusterDNS() []string {
	if o.Kubelet != nil && len(o.Kubelet.ClusterDNS) > 0 {
		return o.Kubelet.ClusterDNS
	}
	if o.ClusterDNS != "" {
		return []string{o.ClusterDNS}
	}
	return nil
}

// kubeletLabels are the Labels the kubelet accepts in --node-labels.
func (o Options) kubeletLabels() map[string]string {
	out := map[string]string{}
	for k, v := range o.Labels {
		if kubeletMaySet(k) {
			out[k] = v
		}
	}
	return out
}

// kubeletMaySet reports whether the kubelet accepts a label key in --node-labels: any key
// outside the kubernetes.io and k8s.io domains, and in them only the kubelet's own labels (the
// kubelet.kubernetes.io and node.kubernetes.io domains and the well-known node labels). The
// kubelet refuses to start with any other.
func kubeletMaySet(key string) bool {
	domain, _, found := strings.Cut(key, "/")
	if !found {
		return true
	}
	inDomain := func(d, parent string) bool { return d == parent || strings.HasSuffix(d, "."+parent) }
	if !inDomain(domain, "kubernetes.io") && !inDomain(domain, "k8s.io") {
		return true
	}
	if inDomain(domain, "kubelet.kubernetes.io") || inDomain(domain, "node.kubernetes.io") {
		return true
	}
	switch key {
	case corev1.LabelHostname, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelInstanceTypeStable,
		corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelFailureDomainBetaZone,
		corev1.LabelFailureDomainBetaRegion, corev1.LabelInstanceType, "beta.kubernetes.io/arch", "beta.kubernetes.io/os":
		return true
	}
	return false
}

// maxPods is MaxPods, else spec.kubelet.maxPods, else nil.
func (o Options) maxPods() *int32 {
	if o.MaxPods != nil {
		return o.MaxPods
	}
	if o.Kubelet != nil {
		return o.Kubelet.MaxPods
	}
	return nil
}

// unionTaints adds each taint of add to base unless base has one with the same key and effect;
// when it has one with another value, add's value wins. The result is sorted by key, then effect.
func unionTaints(base, add []corev1.Taint) []corev1.Taint {
	type id struct {
		key    string
		effect corev1.TaintEffect
	}
	byID := map[id]corev1.Taint{}
	for _, t := range base {
		byID[id{t.Key, t.Effect}] = t
	}
	for _, t := range add {
		byID[id{t.Key, t.Effect}] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
	}
	out := slices.Collect(maps.Values(byID))
	slices.SortFunc(out, func(a, b corev1.Taint) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(string(a.Effect), string(b.Effect))
	})
	return out
}

// hasTaint reports whether taints holds one with want's key and effect (any value).
func hasTaint(taints []corev1.Taint, want corev1.Taint) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.Key == want.Key && t.Effect == want.Effect })
}

// formatTaint writes a taint as the kubelet's --register-with-taints reads it: key[=value]:Effect.
func formatTaint(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// formatTaints joins taints with commas, as --register-with-taints takes them.
func formatTaints(taints []corev1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		parts = append(parts, formatTaint(t))
	}
	return strings.Join(parts, ",")
}

// parseTaints reads a --register-with-taints value. It is lenient: an entry that does not parse
// is returned in bad, for the caller to report.
func parseTaints(spec string) (taints []corev1.Taint, bad []string) {
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndex(entry, ":")
		if i < 0 {
			bad = append(bad, entry)
			continue
		}
		keyValue, effect, ok := entry[:i], entry[i+1:], true
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			ok = false
		}
		key, value, _ := strings.Cut(keyValue, "=")
		if !ok || key == "" {
			bad = append(bad, entry)
			continue
		}
		taints = append(taints, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return taints, bad
}

// formatLabels writes labels as the kubelet's --node-labels reads them, sorted by key.
func formatLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// parseLabels reads a --node-labels value.
func parseLabels(spec string) map[string]string {
	labels := map[string]string{}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		k, v, _ := strings.Cut(entry, "=")
		labels[k] = v
	}
	return labels
}

// taintWarnings advises on taints the operator's userData registers the node with that the
// NodePool does not list: Joiner keeps them, but does not know whether they go away by themselves.
func taintWarnings(operator []corev1.Taint, opts Options, where string) []Warning {
	var out []Warning
	for _, t := range operator {
		if t.Key == v1.UnregisteredTaintKey || hasTaint(opts.Taints, t) || hasTaint(opts.StartupTaints, t) {
			continue
		}
		value := ""
		if t.Value != "" {
			value = fmt.Sprintf("\n    value: %q", t.Value)
		}
		out = append(out, Warning{
			Severity: SeverityAdvice,
			Reason:   "UserDataTaintNotInNodePool",
			Message: fmt.Sprintf("%s registers the node with taint %s, which the NodePool does not list; Joiner keeps it next to %s:NoExecute, "+
				"but without it in the NodePool Joiner cannot know that an agent removes it, so it counts the taint against scheduling and may call the node initialised too early",
				where, formatTaint(t), v1.UnregisteredTaintKey),
			Fix: fmt.Sprintf("remove the taint from userData and list it in the NodePool; an agent's taint (such as Cilium's) belongs in startupTaints:\n"+
				"  spec.template.spec.startupTaints:\n  - key: %s%s\n    effect: %s", t.Key, value, t.Effect),
		})
	}
	return out
}

// invalidTaintWarnings reports --register-with-taints entries the kubelet cannot parse (no
// effect, an unknown effect, no key). The kubelet refuses to start on one ("invalid taint
// effect"), so the operator's flag as written would stop the node from joining; Joiner's merge
// drops the entry, and the node then registers without the taint the operator meant. Either way
// the operator must correct it. consequence says what happens to the node.
func invalidTaintWarnings(bad []string, where, consequence string) []Warning {
	var out []Warning
	for _, entry := range bad {
		out = append(out, Warning{
			Severity: SeverityProblem,
			Reason:   "InvalidKubeletTaint",
			Message: fmt.Sprintf("%s has the taint %q, which the kubelet cannot parse (a taint is key[=value]:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute): "+
				"the kubelet refuses to start on it, %s", where, entry, consequence),
			Fix: "correct the taint's key and effect (effects are case-sensitive: NoSchedule, PreferNoSchedule, NoExecute)",
		})
	}
	return out
}
