package userdata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// Registration is what a node's kubelet registers with, as a static reading of its userData
// finds it: no command is run, no AMI default is applied.
type Registration struct {
	// Starts is false when, as read, the userData starts no kubelet, or one that refuses to start:
	// an AL2 userData that never calls bootstrap.sh, a kubelet flag --register-with-taints with
	// an entry the kubelet cannot parse (Source says which; KubeletFlags still holds the flags).
	// Otherwise AL2023 (nodeadm) and Bottlerocket always start one. A bootstrap.sh call
	// in a branch whose condition only the boot knows counts (Source says so): the node then
	// registers as read, or not at all.
	Starts bool
	// Source says where the registration was read, with the userData line for a script.
	Source string
	// Taints are the taints the kubelet registers with (--register-with-taints, NodeConfig
	// registerWithTaints, Bottlerocket node-taints), sorted by key and effect.
	Taints []corev1.Taint
	// Labels are the --node-labels (or Bottlerocket node-labels).
	Labels map[string]string
	// KubeletFlags are the kubelet's command-line flags from the userData, in order, split as
	// the kubelet receives them (for AL2, as systemd splits the drop-in bootstrap.sh writes),
	// --node-labels and --register-with-taints included. Bottlerocket has none.
	KubeletFlags []string
	// Unknown is empty when the registration is fully known. Otherwise it says what depends on
	// values only the boot knows ($(...), variables never assigned, a script that edits
	// bootstrap.sh, a Custom userData Joiner cannot read), and the fields above must not be
	// relied on.
	Unknown string
}

// ReadRegistration reads, without running anything, the taints, labels and kubelet flags a node
// of an AMI family registers with when it boots with userData (the whole document the instance
// gets, not base64-encoded; for a rendered one, Result.UserData). It reads AL2 shell parts as
// bash and bootstrap.sh would (the last bootstrap.sh call that runs wins), AL2023 NodeConfigs as
// nodeadm merges them, Bottlerocket TOML settings, and for Custom whichever of these it finds.
// It fails only when the userData cannot be parsed in the family's format.
func ReadRegistration(family, userData string) (*Registration, error) {
	switch family {
	case awsv1.AMIFamilyAL2:
		parts, err := operatorParts(userData)
		if err != nil {
			return nil, fmt.Errorf("reading AL2 userData, %w", err)
		}
		return al2Registration(parts), nil
	case awsv1.AMIFamilyAL2023:
		parts, err := al2023OperatorParts(userData)
		if err != nil {
			return nil, fmt.Errorf("reading AL2023 userData, %w", err)
		}
		return al2023Registration(parts)
	case awsv1.AMIFamilyBottlerocket:
		return bottlerocketRegistration(userData)
	case awsv1.AMIFamilyCustom:
		return customRegistration(userData), nil
	}
	return nil, fmt.Errorf("reading userdata, unknown AMI family %q: use AL2, AL2023, Bottlerocket or Custom", family)
}

// al2Registration reads the shell parts in order; each bootstrap.sh call rewrites the kubelet's
// drop-in and restarts it, so the last call that runs decides.
func al2Registration(parts []part) *Registration {
	reg := &Registration{Labels: map[string]string{}}
	// otherWay is the first place a shell part changes bootstrap.sh or mentions another way of
	// registering taints (a kubelet config file, a drop-in); it holds for the calls after it.
	otherWay := ""
	// unknownRun is set when a part runs a file it wrote that the reading cannot follow.
	unknownRun := ""
	for i, p := range parts {
		if p.mediaType() != "text/x-shellscript" {
			continue
		}
		s := readBootstrapScript(p.body)
		if otherWay == "" && s.modifiedAt > 0 {
			otherWay = fmt.Sprintf("userData part %d changes bootstrap.sh itself (line %d)", i+1, s.modifiedAt)
		}
		if otherWay == "" && s.unknownRunAt > 0 {
			otherWay = fmt.Sprintf("userData part %d runs a file it wrote whose content Joiner cannot read (line %d), which may call bootstrap.sh", i+1, s.unknownRunAt)
			unknownRun = otherWay
		}
		if otherWay == "" && s.taintElsewhereAt > 0 {
			otherWay = fmt.Sprintf("userData part %d may register taints some other way (line %d names a kubelet config, a drop-in or the taint)", i+1, s.taintElsewhereAt)
		}
		for _, call := range s.calls {
			earlier := *reg
			reg.Starts = true
			reg.Source = fmt.Sprintf("bootstrap.sh call on line %d of userData part %d", call.line, i+1)
			reg.Unknown = ""
			args, source := call.kubeletExtraArgs()
			reg.KubeletFlags = systemdWords(args.text)
			switch {
			case args.unknown:
				reg.Unknown = fmt.Sprintf("the kubelet arguments (%s) depend on values known only at boot (%s)", source, args.raw)
			case call.uncertain:
				reg.Unknown = "bootstrap.sh's arguments include an unquoted value known only at boot, which may be any number of words"
			case call.conditional && earlier.Starts && (earlier.Unknown != "" || !slices.Equal(earlier.KubeletFlags, reg.KubeletFlags)):
				reg.Unknown = fmt.Sprintf("the bootstrap.sh call on line %d of userData part %d runs only if a condition known at boot holds, and would replace the arguments of the earlier call (%s)",
					call.line, i+1, earlier.Source)
			case otherWay != "":
				reg.Unknown = otherWay
			case call.conditional:
				// Either the call runs and the kubelet gets these flags, or no kubelet starts.
				reg.Source += ", which runs only if a condition known at boot holds"
			}
		}
	}
	if !reg.Starts {
		return &Registration{Source: "no bootstrap.sh call in the userData's shell parts", Unknown: unknownRun}
	}
	reg.fromFlags()
	return reg.refused()
}

// refused returns the registration of a kubelet that refuses to start: the kubelet parses every
// --register-with-taints it is given, and exits at an entry it cannot parse ("invalid taint
// effect"), so the node never registers. Otherwise it returns reg. A registration already unknown
// is kept: its flags may not be the kubelet's.
func (reg *Registration) refused() *Registration {
	if reg.Unknown != "" {
		return reg
	}
	for _, value := range flagValues(reg.KubeletFlags, "--register-with-taints") {
		if _, bad := parseTaints(strings.Trim(value, `"'`)); len(bad) > 0 {
			return &Registration{
				Source:       fmt.Sprintf("%s, whose kubelet refuses to start on the invalid taint %q (a taint is key[=value]:Effect, Effect NoSchedule, PreferNoSchedule or NoExecute)", reg.Source, bad[0]),
				KubeletFlags: reg.KubeletFlags,
				Labels:       map[string]string{},
			}
		}
	}
	return reg
}

// fromFlags sets Taints and Labels from KubeletFlags as the kubelet's flag parsing does: each
// --register-with-taints replaces the taints (the last one wins), each --node-labels adds its
// labels (a later value wins on a key).
func (reg *Registration) fromFlags() {
	if value, ok := lastFlag(reg.KubeletFlags, "--register-with-taints"); ok {
		taints, _ := parseTaints(value)
		reg.Taints = unionTaints(nil, taints)
	}
	reg.Labels = map[string]string{}
	for _, value := range flagValues(reg.KubeletFlags, "--node-labels") {
		maps.Copy(reg.Labels, parseLabels(value))
	}
}

// flagValues returns the value of every --name=value or --name value in words, in order.
func flagValues(words []string, name string) []string {
	var out []string
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, name+"="):
			out = append(out, strings.TrimPrefix(w, name+"="))
		case w == name && i+1 < len(words):
			out = append(out, words[i+1])
		}
	}
	return out
}

// al2023Registration merges the NodeConfig parts as nodeadm does: in order, each document's
// kubelet flags appended to the earlier ones' (nodeadm appends this list and no other), a later
// config registerWithTaints replacing an earlier one, and the kubelet's last
// --register-with-taints overriding config registerWithTaints.
func al2023Registration(parts []part) (*Registration, error) {
	var docs []map[string]any
	for i, p := range parts {
		if p.mediaType() != contentTypeNodeConfig {
			continue
		}
		ds, err := yamlDocuments(p.body)
		if err != nil {
			return nil, fmt.Errorf("reading NodeConfig in userData part %d, %w", i+1, err)
		}
		docs = append(docs, ds...)
	}
	reg, _ := nodeadmRegistration(docs)
	return reg.refused(), nil
}

// nodeadmRegistration merges NodeConfig documents as nodeadm does. taintSource says where the
// taints come from: the --register-with-taints kubelet flag, kubelet config registerWithTaints,
// or "" when neither is set.
func nodeadmRegistration(docs []map[string]any) (reg *Registration, taintSource string) {
	reg = &Registration{Starts: true, Source: "nodeadm NodeConfig"}
	var (
		flags        []string
		configTaints any
	)
	for _, doc := range docs {
		if !isNodeConfig(doc) {
			continue
		}
		spec, _ := doc["spec"].(map[string]any)
		kubelet, _ := spec["kubelet"].(map[string]any)
		if list, ok := kubelet["flags"].([]any); ok {
			for _, f := range list {
				flags = append(flags, fmt.Sprint(f))
			}
		}
		config, _ := kubelet["config"].(map[string]any)
		if raw, ok := config["registerWithTaints"]; ok {
			configTaints = raw
		}
	}
	// nodeadm writes the flags into the kubelet's environment file as one value, which systemd
	// splits into words, removing quotes.
	reg.KubeletFlags = systemdWords(strings.Join(flags, " "))
	reg.fromFlags()
	if _, ok := lastFlag(reg.KubeletFlags, "--register-with-taints"); ok {
		return reg, "the --register-with-taints kubelet flag"
	}
	if configTaints != nil {
		reg.Taints = unionTaints(nil, taintsFromConfig(configTaints))
		return reg, "kubelet config registerWithTaints"
	}
	return reg, ""
}

// bottlerocketRegistration reads settings.kubernetes node-taints and node-labels.
func bottlerocketRegistration(userData string) (*Registration, error) {
	doc, err := parseBottlerocket(userData)
	if err != nil {
		return nil, fmt.Errorf("reading Bottlerocket userData as TOML, %w", err)
	}
	k8s, _, err := doc.kubernetes(false)
	if err != nil {
		return nil, fmt.Errorf("reading Bottlerocket userData, %w", err)
	}
	reg := &Registration{Starts: true, Source: "Bottlerocket settings.kubernetes", Labels: map[string]string{}}
	if t, ok := k8s["node-taints"].(map[string]any); ok {
		reg.Taints = unionTaints(nil, nodeTaints(t))
	}
	if l, ok := k8s["node-labels"].(map[string]any); ok {
		for k, v := range l {
			if s, ok := v.(string); ok {
				reg.Labels[k] = s
			}
		}
	}
	return reg, nil
}

// customRegistration reads Custom userData in the first of the forms it has: bootstrap.sh
// calls, NodeConfigs, Bottlerocket TOML.
func customRegistration(userData string) *Registration {
	var parts []part
	if isMIME(userData) {
		parts, _ = parseMIME(userData)
	} else {
		parts = []part{newPart(contentTypeShell, userData)}
		if docs, err := yamlDocuments(userData); err == nil && len(docs) > 0 && isNodeConfig(docs[0]) {
			parts = []part{newPart(contentTypeNodeConfig, userData)}
		}
	}
	// A bootstrap.sh call found: a kubelet starts, refuses to start (flags kept), or what the
	// script runs cannot be read.
	if reg := al2Registration(parts); reg.Starts || len(reg.KubeletFlags) > 0 || reg.Unknown != "" {
		return reg
	}
	if reg, err := al2023Registration(parts); err == nil && (len(reg.KubeletFlags) > 0 || len(reg.Taints) > 0) {
		return reg
	}
	if _, found := bottlerocketNodeTaints(userData); found {
		if reg, err := bottlerocketRegistration(userData); err == nil {
			return reg
		}
	}
	return &Registration{Source: "Custom userData", Unknown: "amiFamily Custom: Joiner finds no bootstrap.sh call, NodeConfig or Bottlerocket settings it can read"}
}

// String writes a registration for messages and test failures.
func (reg *Registration) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "starts=%v source=%q taints=%s labels=%s flags=%q", reg.Starts, reg.Source, formatTaints(reg.Taints), formatLabels(reg.Labels), reg.KubeletFlags)
	if reg.Unknown != "" {
		fmt.Fprintf(&b, " unknown=%q", reg.Unknown)
	}
	return b.String()
}
