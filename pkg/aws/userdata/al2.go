package userdata

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// renderAL2 wraps the operator's userData (a script or a MIME document, whose parts are kept) in
// a MIME multi-part document and appends a shell part that calls bootstrap.sh, unless the
// operator's parts call it themselves.
func renderAL2(opts Options) (*Result, error) {
	parts, err := operatorParts(opts.UserData)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	operatorCalls := false
	for _, p := range parts {
		if p.mediaType() == "text/x-shellscript" && callsBootstrap(p.body) {
			operatorCalls = true
			res.Warnings = append(res.Warnings, CheckBootstrapScript(p.body)...)
		}
	}
	if operatorCalls {
		res.Warnings = append(res.Warnings, Warning{
			Severity: SeverityAdvice,
			Reason:   "UserDataCallsBootstrap",
			Message: "the EC2NodeClass userData calls /etc/eks/bootstrap.sh itself, so Joiner adds no bootstrap part of its own: " +
				"that call must register the node with karpenter.sh/unregistered:NoExecute, and the NodePool's labels, taints and max pods are not passed",
			Fix: "remove the bootstrap.sh call from userData and let Joiner's part make it (your parts still run first); " +
				"move kubelet settings to spec.kubelet, and labels and taints to the NodePool",
		})
	} else {
		parts = append(parts, newPart(contentTypeShell, al2BootstrapScript(opts)))
	}
	return &Result{UserData: writeMIME(parts), Warnings: res.Warnings}, nil
}

// operatorParts reads the operator's userData as MIME parts: a MIME document's own parts, or the
// whole userData as one shell (or cloud-config) part. Empty userData has no parts.
func operatorParts(userData string) ([]part, error) {
	if strings.TrimSpace(userData) == "" {
		return nil, nil
	}
	if isMIME(userData) {
		return parseMIME(userData)
	}
	if strings.HasPrefix(userData, "#cloud-config") {
		return []part{newPart(contentTypeCloudConfig, userData)}, nil
	}
	return []part{newPart(contentTypeShell, userData)}, nil
}

// al2BootstrapScript is Joiner's shell part: one bootstrap.sh call with two-word options.
func al2BootstrapScript(opts Options) string {
	lines := []string{"/etc/eks/bootstrap.sh " + shellQuote(opts.ClusterName),
		"--apiserver-endpoint " + shellQuote(opts.ClusterEndpoint),
		"--b64-cluster-ca " + shellQuote(opts.CABundle)}
	dns := opts.clusterDNS()
	if len(dns) > 0 {
		lines = append(lines, "--dns-cluster-ip "+shellQuote(dns[0]))
	}
	if opts.maxPods() != nil {
		lines = append(lines, "--use-max-pods false")
	}
	// bootstrap.sh's --local-disks raid0 runs setup-local-disks: a RAID-0 array of the NVMe
	// instance-store disks, mounted at /mnt/k8s-disks/0, with the kubelet's, containerd's and the
	// pod logs' directories bind-mounted onto it.
	if opts.InstanceStorePolicy == awsv1.InstanceStorePolicyRAID0 {
		lines = append(lines, "--local-disks raid0")
	}
	lines = append(lines, "--kubelet-extra-args "+shellQuote(strings.Join(al2KubeletArgs(opts, dns), " ")))
	return "#!/bin/bash -xe\n" + strings.Join(lines, " \\\n  ") + "\n"
}

// al2KubeletArgs are the kubelet flags Joiner passes through --kubelet-extra-args. Values are
// double-quoted for systemd, which removes the quotes; % is doubled because systemd expands
// specifiers in the drop-in bootstrap.sh writes.
func al2KubeletArgs(opts Options, dns []string) []string {
	q := func(s string) string { return `"` + strings.ReplaceAll(s, "%", "%%") + `"` }
	var args []string
	if labels := opts.kubeletLabels(); len(labels) > 0 {
		args = append(args, "--node-labels="+q(formatLabels(labels)))
	}
	args = append(args, "--register-with-taints="+q(formatTaints(opts.requiredTaints())))
	if mp := opts.maxPods(); mp != nil {
		args = append(args, "--max-pods="+strconv.Itoa(int(*mp)))
	}
	if len(dns) > 1 {
		args = append(args, "--cluster-dns="+q(strings.Join(dns, ",")))
	}
	k := opts.Kubelet
	if k == nil {
		return args
	}
	if k.PodsPerCore != nil {
		args = append(args, "--pods-per-core="+strconv.Itoa(int(*k.PodsPerCore)))
	}
	if len(k.SystemReserved) > 0 {
		args = append(args, "--system-reserved="+q(joinMap(k.SystemReserved, "=")))
	}
	if len(k.KubeReserved) > 0 {
		args = append(args, "--kube-reserved="+q(joinMap(k.KubeReserved, "=")))
	}
	if len(k.EvictionHard) > 0 {
		args = append(args, "--eviction-hard="+q(joinMap(k.EvictionHard, "<")))
	}
	if len(k.EvictionSoft) > 0 {
		args = append(args, "--eviction-soft="+q(joinMap(k.EvictionSoft, "<")))
	}
	if len(k.EvictionSoftGracePeriod) > 0 {
		periods := map[string]string{}
		for signal, d := range k.EvictionSoftGracePeriod {
			periods[signal] = d.Duration.String()
		}
		args = append(args, "--eviction-soft-grace-period="+q(joinMap(periods, "=")))
	}
	if k.EvictionMaxPodGracePeriod != nil {
		args = append(args, "--eviction-max-pod-grace-period="+strconv.Itoa(int(*k.EvictionMaxPodGracePeriod)))
	}
	if k.ImageGCHighThresholdPercent != nil {
		args = append(args, "--image-gc-high-threshold="+strconv.Itoa(int(*k.ImageGCHighThresholdPercent)))
	}
	if k.ImageGCLowThresholdPercent != nil {
		args = append(args, "--image-gc-low-threshold="+strconv.Itoa(int(*k.ImageGCLowThresholdPercent)))
	}
	if k.CPUCFSQuota != nil {
		args = append(args, "--cpu-cfs-quota="+strconv.FormatBool(*k.CPUCFSQuota))
	}
	return args
}

// joinMap writes a map as k<sep>v pairs joined by commas, sorted by key.
func joinMap[V ~string](m map[string]V, sep string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+sep+string(m[k]))
	}
	return strings.Join(parts, ",")
}
