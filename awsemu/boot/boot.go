package boot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// Input is one instance booting in one cluster.
type Input struct {
	Instance Instance
	Cluster  Cluster
}

// Outcome is how a boot ended.
type Outcome struct {
	// Joined is true when the Node was registered.
	Joined bool
	// Reason is empty when joined, else one of the Reason* constants.
	Reason string
	// Message says in one line why the node did not join, or notes how it joined.
	Message string
	// Retry is true when a real kubelet would keep trying and could still join without a
	// reboot if the cluster changed (Unauthorized, Forbidden, API errors): the caller may call
	// Boot again later. False when the node can never join as launched.
	Retry bool
	// Console is what GetConsoleOutput shows, one line each, stamped with the uptime.
	Console []string
	// Registration is what the kubelet was configured with; nil when no kubelet started.
	Registration *KubeletRegistration
	// Attempt is the index in Console of the first line of the kubelet's registration
	// attempt, after the bootstrap's lines; zero when no kubelet started. A caller that boots
	// again after Retry shows only Console[Attempt:] of the later outcomes: a real kubelet
	// retries its registration without running the bootstrap again.
	Attempt int
	// Node is the Node registered, or that would have been registered had the API server
	// admitted it; nil when no kubelet started.
	Node *corev1.Node
	// Err is set with ReasonAPIError: the API server or the aws-auth read failed.
	Err error
}

// Booter boots instances: Boot interprets userData, checks the kubelet can reach and is
// admitted by the API server, and registers the Node.
type Booter struct {
	clock clock.PassiveClock
	api   APIServer
}

// NewBooter returns a Booter that stamps the console with clk and registers through api.
func NewBooter(clk clock.PassiveClock, api APIServer) *Booter {
	return &Booter{clock: clk, api: api}
}

// Boot runs the boot of in.Instance now. The caller calls it once the instance's boot delay has
// passed (and again later when Outcome.Retry is true); Boot never sleeps. The console lines of
// every step, including the kubelet's log lines a real console shows only when the journal is
// forwarded, are in the Outcome whatever happens.
func (b *Booter) Boot(ctx context.Context, in Input) (out Outcome) {
	inst, cl := in.Instance, in.Cluster
	console := bootHeader(inst.AMIFamily, b.clock.Now())
	defer func() { out.Console = b.stamp(inst, out.Console) }()

	reg, lines, err := interpretAt(inst, cl, b.clock.Now())
	console = append(console, lines...)
	if err != nil {
		out.Console = console
		var be *BootError
		if errors.As(err, &be) {
			out.Reason, out.Message = be.Reason, be.Message
			return out
		}
		out.Reason, out.Message = ReasonUserDataInvalid, err.Error()
		return out
	}
	out.Registration = reg
	node := NodeFor(inst, reg, cl.KubernetesVersion, b.clock.Now())
	out.Node = node
	out.Attempt = len(console)
	klog := func(severity byte, source, msg string) {
		console = append(console, kubeletP+klogLine(severity, b.clock.Now(), source, msg))
	}
	fail := func(reason string, retry bool, msg string) Outcome {
		klog('E', "kubelet_node_status.go:95", fmt.Sprintf("\"Unable to register node with API server\" err=%q node=%q", msg, node.Name))
		out.Reason, out.Message, out.Retry, out.Console = reason, msg, retry, console
		return out
	}

	if !sameEndpoint(reg.APIServerEndpoint, cl.Endpoint) {
		return fail(ReasonAPIServerUnreachable, false, fmt.Sprintf("Post \"%s/api/v1/nodes\": dial tcp: lookup %s: no such host",
			strings.TrimSuffix(reg.APIServerEndpoint, "/"), hostOf(reg.APIServerEndpoint)))
	}
	if !sameCA(reg.CertificateAuthority, cl.CertificateAuthority) {
		return fail(ReasonAPIServerUnreachable, false, fmt.Sprintf("Post \"%s/api/v1/nodes\": tls: failed to verify certificate: x509: certificate signed by unknown authority", cl.Endpoint))
	}
	if inst.RoleARN == "" {
		// The kubelet keeps trying: credentials appear once a role is added to the profile.
		klog('E', "token.go:112", "\"Failed to get token\" err=\"NoCredentialProviders: no valid providers in chain: the instance has no instance profile\"")
		return fail(ReasonUnauthorized, true, "Unauthorized")
	}
	if reg.ClusterName != cl.Name {
		// The token names the cluster it is for; the authenticator refuses one for another.
		return fail(ReasonUnauthorized, false, "Unauthorized")
	}
	mapRoles, found, err := b.api.AWSAuth(ctx)
	if err != nil {
		out.Err = err
		return fail(ReasonAPIError, true, err.Error())
	}
	d := Authorize(AuthRequest{
		RoleARN: inst.RoleARN, NodeName: node.Name, PrivateDNSName: inst.PrivateDNSName, SessionName: inst.ID,
		MapRoles: mapRoles, ConfigMapFound: found,
		AccessEntries: cl.AccessEntries, AuthenticationMode: cl.AuthenticationMode,
	})
	for _, w := range d.Warnings {
		klog('W', "kubelet.go:1596", w)
	}
	if !d.Allowed {
		return fail(d.Reason, true, d.Message)
	}
	klog('I', "kubelet_node_status.go:75", fmt.Sprintf("\"Attempting to register node\" node=%q", node.Name))
	if err := b.api.RegisterNode(ctx, node); err != nil {
		out.Err = err
		return fail(ReasonAPIError, true, err.Error())
	}
	klog('I', "kubelet_node_status.go:78", fmt.Sprintf("\"Successfully registered node\" node=%q", node.Name))
	out.Joined, out.Message, out.Console = true, d.Message, console
	return out
}

// klogLine formats a kubelet log line as klog does: Lmmdd hh:mm:ss.uuuuuu pid file:line] msg.
func klogLine(severity byte, now time.Time, source, msg string) string {
	now = now.UTC()
	return fmt.Sprintf("%c%02d%02d %s %7d %s] %s", severity, int(now.Month()), now.Day(), now.Format("15:04:05.000000"), 3127, source, msg)
}

// bootHeader is what the console shows before the bootstrap's own output.
func bootHeader(family string, now time.Time) []string {
	if family == awsv1.AMIFamilyBottlerocket {
		return []string{"Linux version 6.1 (builder@buildkitsandbox) #1 SMP", systemd + "Welcome to Bottlerocket OS!"}
	}
	return []string{
		"Linux version 6.1 (mockbuild@amazon.com) #1 SMP",
		fmt.Sprintf("Cloud-init v. 22.2.2 running 'modules:final' at %s.", now.UTC().Format(time.RFC1123Z)),
	}
}

// stamp prefixes console lines with the uptime, as the kernel console does.
func (b *Booter) stamp(inst Instance, lines []string) []string {
	up := b.clock.Since(inst.LaunchTime)
	if inst.LaunchTime.IsZero() || up < 0 {
		up = 0
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		t := up + time.Duration(i)*10*time.Millisecond
		out[i] = fmt.Sprintf("[%12.6f] %s", t.Seconds(), l)
	}
	return out
}

func normalizeEndpoint(e string) string {
	e = strings.TrimSuffix(strings.TrimSpace(strings.ToLower(e)), "/")
	if !strings.Contains(e, "://") {
		e = "https://" + e
	}
	return strings.TrimSuffix(e, ":443")
}

func sameEndpoint(a, b string) bool { return normalizeEndpoint(a) == normalizeEndpoint(b) }

func hostOf(endpoint string) string {
	h := normalizeEndpoint(endpoint)
	h = h[strings.Index(h, "://")+3:]
	host, _, _ := strings.Cut(h, "/")
	return host
}

// sameCA compares the decoded CA the kubelet trusts with the cluster's base64 CA.
func sameCA(decoded, clusterB64 string) bool {
	want, err := decodeB64(clusterB64)
	if err != nil {
		return false
	}
	return strings.TrimSpace(decoded) == strings.TrimSpace(want)
}
