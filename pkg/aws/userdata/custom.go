package userdata

import (
	"fmt"
	"strings"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// renderCustom passes the operator's userData verbatim and checks that some registration with the
// required taint is visible in it.
func renderCustom(opts Options) *Result {
	return &Result{UserData: opts.UserData, Warnings: CheckCustom(opts.UserData)}
}

// CheckCustom looks in Custom userData for a kubelet registration with
// karpenter.sh/unregistered:NoExecute, in any of the forms Joiner knows: a bootstrap.sh call
// (checked as CheckBootstrapScript does), a --register-with-taints flag or NodeConfig
// registerWithTaints entry, or Bottlerocket node-taints. It warns (Advice: Joiner cannot see
// everything a custom image does at boot) when none is visible, and reports the bootstrap.sh
// problems it finds.
func CheckCustom(userData string) []Warning {
	required := v1.UnregisteredNoExecuteTaint()
	var bootstrapWarnings []Warning
	scripts := []string{userData}
	if isMIME(userData) {
		if parts, err := parseMIME(userData); err == nil {
			scripts = scripts[:0]
			for _, p := range parts {
				scripts = append(scripts, p.body)
			}
		}
	}
	for _, s := range scripts {
		if callsBootstrap(s) {
			bootstrapWarnings = append(bootstrapWarnings, CheckBootstrapScript(s)...)
		}
	}
	if len(bootstrapWarnings) > 0 || taintVisible(scripts, required.Key, string(required.Effect)) {
		return bootstrapWarnings
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
