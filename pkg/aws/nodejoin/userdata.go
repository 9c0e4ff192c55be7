package nodejoin

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/joinerhq/joiner/pkg/agenttaint"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
)

// Reasons of the userData checks, beyond pkg/aws/userdata's own (BootstrapOptionIgnored,
// UnregisteredTaintMissing, BootstrapTaintUnverifiable, CustomUserDataTaintNotVisible...), which
// are passed through.
const (
	ReasonUserDataInvalid            = "UserDataInvalid"
	ReasonInvalidKubeletArguments    = "InvalidKubeletArguments"
	ReasonAgentTaintNotStartupTaint  = "AgentTaintNotInStartupTaints"
	reasonUserDataTaintNotInNodePool = "UserDataTaintNotInNodePool"
)

// userDataSeverity maps pkg/aws/userdata's severities: a Problem is certain; advice that says
// the taint cannot be verified is a Warning; other advice stays advice.
func userDataSeverity(w userdata.Warning) Severity {
	switch {
	case w.Severity == userdata.SeverityProblem:
		return SeverityError
	case w.Reason == "BootstrapTaintUnverifiable" || w.Reason == "CustomUserDataTaintNotVisible":
		return SeverityWarning
	}
	return SeverityAdvice
}

// checkUserData renders the class's userData as Joiner would for each NodePool, passes on
// pkg/aws/userdata's warnings with the offending line quoted, and checks the kubelet flags the
// node gets as the kubelet would parse them.
func checkUserData(in Inputs) []Finding {
	nc := in.NodeClass
	family := userdata.FamilyOf(nc)
	if family == "" {
		return nil
	}
	operator := ""
	if nc.Spec.UserData != nil {
		operator = *nc.Spec.UserData
	}
	pools := in.NodePools
	if len(pools) == 0 {
		pools = []*v1.NodePool{{}}
	}
	var out []Finding
	for _, pool := range pools {
		rendered, err := userdata.Render(userdata.NewOptions(in.Cluster, nc, userdata.PreviewNodeClaim(pool), nil))
		if err != nil {
			out = append(out, Finding{Severity: SeverityError, Object: nodeClassObject(nc), Reason: ReasonUserDataInvalid,
				Message: err.Error(), Fix: "correct spec.userData so that it parses in the format of amiFamily " + family})
			continue
		}
		reg, err := userdata.ReadRegistration(family, rendered.UserData)
		var agents []agentFinding
		// A kubelet that refuses its flags (Starts false, flags read) is exactly what the flag
		// check explains.
		if err == nil && reg.Unknown == "" && (reg.Starts || len(reg.KubeletFlags) > 0) {
			out = append(out, checkKubeletFlags(nc.Name, operator, reg.KubeletFlags)...)
		}
		if err == nil && reg.Unknown == "" && reg.Starts {
			agents = agentTaints(in, pool, reg.Taints)
		}
		// The agent-taint advice comes first: of all advice, it is what S3's operator needed.
		for _, a := range agents {
			out = append(out, a.Finding)
		}
		for _, w := range rendered.Warnings {
			if w.Reason == reasonUserDataTaintNotInNodePool && slices.ContainsFunc(agents, func(a agentFinding) bool { return strings.Contains(w.Message, "taint "+a.taint+",") }) {
				continue // the agent-taint advice says it, naming the agent
			}
			out = append(out, fromWarning(nc.Name, operator, w))
		}
	}
	return out
}

var userDataLine = regexp.MustCompile(`^userData line (\d+):`)

// fromWarning turns a userdata.Warning into a finding, quoting the line it names when the
// userData is a plain script (line numbers of a MIME part's script are the part's).
func fromWarning(nodeClass, operator string, w userdata.Warning) Finding {
	f := Finding{Severity: userDataSeverity(w), Object: "EC2NodeClass/" + nodeClass, Reason: w.Reason, Message: w.Message, Fix: w.Fix}
	m := userDataLine.FindStringSubmatch(w.Message)
	if m == nil || isMIME(operator) {
		return f
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(operator, "\n")
	if n < 1 || n > len(lines) {
		return f
	}
	line := strings.TrimSpace(lines[n-1])
	f.Message += fmt.Sprintf(". The line: %s", line)
	if w.Reason == "BootstrapOptionIgnored" {
		if fixed := bootstrapOptionWord.ReplaceAllString(line, "$1 "); fixed != line {
			f.Fix += ". The corrected line: " + fixed
		}
	}
	return f
}

// bootstrapOptionWord is an AL2 bootstrap.sh option written as name=value.
var bootstrapOptionWord = regexp.MustCompile(`(--(?:kubelet-extra-args|b64-cluster-ca|apiserver-endpoint|dns-cluster-ip|use-max-pods|container-runtime|ip-family|service-ipv6-cidr|enable-docker-bridge|docker-config-json|pause-container-account|pause-container-version|aws-api-retry-attempts|enable-local-outpost|cluster-id|mount-bpf-fs|local-disks))=`)

var mimeHeader = regexp.MustCompile(`(?im)^(MIME-Version|Content-Type):`)

func isMIME(s string) bool { return mimeHeader.MatchString(s) }

// checkKubeletFlags reads the kubelet's flags as the kubelet parses them: quotes that reach it
// are part of the value; --register-with-taints is a comma-separated list of key[=value]:effect
// with no blanks, a valid key and value, and one of the three effects; a word that is not a flag
// after a list ending in a comma is the rest of the list split off by a blank.
func checkKubeletFlags(nodeClass, operator string, words []string) []Finding {
	var out []Finding
	add := func(flag, problem, fixedFlag string, fixLine func(string) string) {
		f := Finding{Severity: SeverityError, Object: "EC2NodeClass/" + nodeClass, Reason: ReasonInvalidKubeletArguments}
		f.Message = fmt.Sprintf("the kubelet gets %s: %s, so it refuses to start and the node never registers", flag, problem)
		f.Fix = "pass " + fixedFlag
		if line, ok := lineWith(operator, flagName(flag)); ok {
			f.Message += ". The line: " + line
			if fixed := fixLine(line); fixed != line {
				f.Fix = "write the line as: " + fixed
			}
		}
		out = append(out, f)
	}
	for i, w := range words {
		if strings.ContainsAny(w, `"'`) {
			fixed := strings.NewReplacer(`"`, "", `'`, "").Replace(w)
			add(w, "the quotes reach the kubelet as part of the value (they were escaped, so neither the shell nor systemd removed them)", fixed, func(line string) string {
				return strings.NewReplacer(`\"`, "", `\'`, "").Replace(line)
			})
			continue
		}
		value, ok := "", false
		switch {
		case strings.HasPrefix(w, "--register-with-taints="):
			value, ok = strings.TrimPrefix(w, "--register-with-taints="), true
		case w == "--register-with-taints" && i+1 < len(words):
			value, ok = words[i+1], true
		}
		if !ok {
			continue
		}
		flag := "--register-with-taints=" + value
		if strings.HasSuffix(value, ",") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			rest := words[i+1]
			add(flag+" "+rest, fmt.Sprintf("a blank after a comma splits the taint list, so the list ends in an empty taint and %q is a stray argument", rest),
				flag+rest, func(line string) string { return collapseCommaBlanks(line) })
			continue
		}
		for _, entry := range strings.Split(value, ",") {
			if problem, fixed := checkTaintEntry(entry); problem != "" {
				fixedValue := strings.Replace(value, entry, fixed, 1)
				add(flag, problem, "--register-with-taints="+fixedValue, func(line string) string {
					return collapseCommaBlanks(strings.Replace(line, entry, fixed, 1))
				})
				break
			}
		}
	}
	return out
}

func collapseCommaBlanks(line string) string {
	i := strings.Index(line, "--register-with-taints")
	if i < 0 {
		return line
	}
	return line[:i] + commaBlanks.ReplaceAllString(line[i:], ",")
}

var commaBlanks = regexp.MustCompile(`,[ \t]+`)

func flagName(word string) string {
	name, _, _ := strings.Cut(word, "=")
	return name
}

// lineWith returns the last line of userData naming flag (the kubelet keeps the last).
func lineWith(userData, flag string) (string, bool) {
	lines := strings.Split(userData, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], flag) {
			return strings.TrimSpace(lines[i]), true
		}
	}
	return "", false
}

var effects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// checkTaintEntry checks one key[=value]:effect as the kubelet's taint parsing does; it returns
// the problem and the corrected entry, or "".
func checkTaintEntry(entry string) (problem, fixed string) {
	if entry == "" {
		return "the taint list has an empty entry (a doubled or trailing comma)", ""
	}
	if strings.TrimSpace(entry) != entry {
		return fmt.Sprintf("taint %q has a blank (after a comma?), and a key cannot", entry), strings.TrimSpace(entry)
	}
	keyValue, effect, found := strings.Cut(entry, ":")
	if !found {
		return fmt.Sprintf("taint %q has no effect (key[=value]:effect)", entry), entry + ":" + string(corev1.TaintEffectNoSchedule)
	}
	if !slices.Contains(effects, corev1.TaintEffect(effect)) {
		suggestion := nearestEffect(effect)
		return fmt.Sprintf("taint %q has effect %q, which is none of NoSchedule, PreferNoSchedule and NoExecute", entry, effect), keyValue + ":" + string(suggestion)
	}
	key, value, _ := strings.Cut(keyValue, "=")
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Sprintf("taint key %q is invalid: %s", key, strings.Join(errs, "; ")), entry
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return fmt.Sprintf("taint value %q is invalid: %s", value, strings.Join(errs, "; ")), entry
	}
	return "", ""
}

// nearestEffect is the valid effect closest to a misspelt one.
func nearestEffect(effect string) corev1.TaintEffect {
	best, bestDistance := corev1.TaintEffectNoSchedule, -1
	for _, e := range effects {
		if d := distance(strings.ToLower(effect), strings.ToLower(string(e))); bestDistance < 0 || d < bestDistance {
			best, bestDistance = e, d
		}
	}
	return best
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// agentTaints advises declaring in startupTaints the agent taints (pkg/agenttaint) a node
// registers with that the NodePool does not declare.
func agentTaints(in Inputs, pool *v1.NodePool, taints []corev1.Taint) []agentFinding {
	if pool.Name == "" {
		return nil
	}
	declared := append(slices.Clone(pool.Spec.Template.Spec.StartupTaints), pool.Spec.Template.Spec.Taints...)
	var out []agentFinding
	for _, t := range agenttaint.Undeclared(taints, declared) {
		agent, _ := agenttaint.Lookup(t)
		out = append(out, agentFinding{taint: formatTaint(t), Finding: Finding{Severity: SeverityAdvice, Object: "NodePool/" + pool.Name, Reason: ReasonAgentTaintNotStartupTaint,
			Message: fmt.Sprintf("agent taint %s (%s) is registered by the userData of EC2NodeClass %s but not declared by NodePool %s: its agent removes it once ready, and Joiner waits for it only when it is a startup taint",
				t.ToString(), agent.Name, in.NodeClass.Name, pool.Name),
			Fix: fmt.Sprintf("add to NodePool %s:\n%s", pool.Name, agenttaint.StartupTaintsYAML([]corev1.Taint{t}))}})
	}
	return out
}

// agentFinding is an agent-taint finding and its taint, as pkg/aws/userdata writes it.
type agentFinding struct {
	Finding
	taint string
}

// formatTaint writes a taint as --register-with-taints takes it, key[=value]:effect.
func formatTaint(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}
