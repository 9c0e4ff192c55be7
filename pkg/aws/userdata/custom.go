package userdata

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// renderCustom passes the operator's userData verbatim and checks that some registration with the
// required taint is visible in it.
func renderCustom(opts Options) *Result {
	return &Result{UserData: opts.UserData, Warnings: CheckCustom(opts.UserData)}
}

// CheckCustom looks in Custom userData for a kubelet registration with
// karpenter.sh/unregistered:NoExecute, in the forms Joiner can read: bootstrap.sh calls (checked
// as CheckBootstrapScript does), nodeadm NodeConfigs (merged as nodeadm merges them, the kubelet
// keeping the last --register-with-taints), and Bottlerocket settings.kubernetes.node-taints. In
// those it reports a missing taint as a Problem. Otherwise it looks for the taint named anywhere
// near its effect, and warns (Advice: Joiner cannot see everything a custom image does at boot)
// when it is not.
func CheckCustom(userData string) []Warning {
	required := v1.UnregisteredNoExecuteTaint()
	texts := []string{userData}
	var docs []map[string]any
	if isMIME(userData) {
		if parts, err := parseMIME(userData); err == nil {
			texts = texts[:0]
			for _, p := range parts {
				texts = append(texts, p.body)
				if p.mediaType() == contentTypeNodeConfig {
					ds, _ := yamlDocuments(p.body)
					docs = append(docs, ds...)
				}
			}
		}
	} else if ds, err := yamlDocuments(userData); err == nil && len(ds) > 0 && isNodeConfig(ds[0]) {
		docs = ds
	}
	var out []Warning
	for _, text := range texts {
		if callsBootstrap(text) {
			out = append(out, CheckBootstrapScript(text)...)
		}
	}
	out = append(out, customInvalidTaints(docs)...)
	if taints, source, found := nodeadmTaints(docs); found {
		if !hasTaint(taints, required) {
			out = append(out, Warning{
				Severity: SeverityProblem,
				Reason:   "UnregisteredTaintMissing",
				Message: fmt.Sprintf("nodeadm merges the userData NodeConfigs in order, and the kubelet registers with %s: %q, without %s, so Joiner must refuse the node",
					source, formatTaints(taints), formatTaint(required)),
				Fix: fmt.Sprintf("add %s to %s (keep one --register-with-taints flag in one NodeConfig), or use amiFamily AL2023 and let Joiner merge it",
					formatTaint(required), source),
			})
		}
		return out
	}
	if taints, found := bottlerocketNodeTaints(userData); found {
		if !hasTaint(taints, required) {
			out = append(out, Warning{
				Severity: SeverityProblem,
				Reason:   "UnregisteredTaintMissing",
				Message:  fmt.Sprintf("the Bottlerocket settings.kubernetes.node-taints do not include %s, so Joiner must refuse the node", formatTaint(required)),
				Fix:      fmt.Sprintf("add \"%s\" = [\":%s\"] to [settings.kubernetes.node-taints], or use amiFamily Bottlerocket and let Joiner add it", required.Key, required.Effect),
			})
		}
		return out
	}
	if len(out) > 0 || taintVisible(texts, required.Key, string(required.Effect)) {
		return out
	}
	return []Warning{{
		Severity: SeverityAdvice,
		Reason:   "CustomUserDataTaintNotVisible",
		Message: fmt.Sprintf("amiFamily Custom passes userData verbatim, and Joiner sees no kubelet registration with %s in it "+
			"(no --register-with-taints, NodeConfig registerWithTaints or Bottlerocket node-taints naming it); a node that registers without it is refused",
			formatTaint(required)),
		Fix: fmt.Sprintf("register the kubelet with %s (for example --register-with-taints=%s), or use amiFamily AL2, AL2023 or Bottlerocket and let Joiner add it",
			formatTaint(required), formatTaint(required)),
	}}
}

// nodeadmTaints returns the taints the kubelet registers with under NodeConfig documents, as
// nodeadm merges them (in order, kubelet flags appended) and the kubelet reads
// them (its last --register-with-taints flag, else config registerWithTaints). source names
// which; found is false when no document sets either.
func nodeadmTaints(docs []map[string]any) (taints []corev1.Taint, source string, found bool) {
	reg, taintSource := nodeadmRegistration(docs)
	if taintSource == "" {
		return nil, "", false
	}
	return reg.Taints, taintSource, true
}

// bottlerocketNodeTaints reads settings.kubernetes.node-taints of Bottlerocket TOML; found is
// false when the userData is not TOML with a settings.kubernetes table.
func bottlerocketNodeTaints(userData string) (taints []corev1.Taint, found bool) {
	doc, err := parseBottlerocket(userData)
	if err != nil {
		return nil, false
	}
	k8s, found, err := doc.kubernetes(false)
	if err != nil || !found {
		return nil, false
	}
	if t, ok := k8s["node-taints"].(map[string]any); ok {
		taints = nodeTaints(t)
	}
	return taints, true
}

// taintVisible reports whether some text names the taint key with the effect nearby, as a flag,
// a NodeConfig entry or a Bottlerocket setting would.
func taintVisible(texts []string, key, effect string) bool {
	for _, text := range texts {
		for rest := text; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			window := rest[i+len(key) : min(len(rest), i+len(key)+80)]
			if strings.Contains(window, effect) {
				return true
			}
			rest = rest[i+len(key):]
		}
	}
	return false
}

// customInvalidTaints reports --register-with-taints entries in NodeConfig kubelet flags that the
// kubelet cannot parse: Custom userData reaches the node as written, and the kubelet refuses to
// start ("invalid taint effect"), so the node never joins.
func customInvalidTaints(docs []map[string]any) []Warning {
	var out []Warning
	for _, doc := range docs {
		if !isNodeConfig(doc) {
			continue
		}
		spec, _ := doc["spec"].(map[string]any)
		kubelet, _ := spec["kubelet"].(map[string]any)
		list, _ := kubelet["flags"].([]any)
		words := make([]string, 0, len(list))
		for _, f := range list {
			words = append(words, fmt.Sprint(f))
		}
		for _, value := range flagValues(systemdWords(strings.Join(words, " ")), "--register-with-taints") {
			_, bad := parseTaints(value)
			out = append(out, invalidTaintWarnings(bad, "the userData NodeConfig's kubelet flag --register-with-taints="+value,
				"and amiFamily Custom passes the userData as written, so the node never joins")...)
		}
	}
	return out
}
