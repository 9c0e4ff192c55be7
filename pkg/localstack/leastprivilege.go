package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/chartrbac"
)

// chartRelease and chartNamespace are the release the stack renders the chart as: the
// ServiceAccount kube-system/joiner, whose Role holds the controller's default Lease.
const (
	chartRelease   = "joiner"
	chartNamespace = "kube-system"
	// tokenTTL outlives any run of the stack; the controller reads its kubeconfig once.
	tokenTTL = 24 * time.Hour
)

// seedPolicy writes the world the emulator seeds from, with the generated policy as the
// controller role's policy: the stack's world (opts.World) or, without one, a world of the
// stack's cluster and region that keeps every other default of the demo world.
func (s *Stack) seedPolicy() error {
	f, err := s.describeWorld()
	if err != nil {
		return err
	}
	// The controller reads the queue Start chose: the world's (or the demo world's), or the
	// one its flags give.
	queue := s.InterruptionQueue
	o := iampolicy.Options{
		ClusterName: f.Cluster.Name, Region: f.Cluster.Region, AccountID: f.Cluster.AccountID,
		NodeRoles: nodeRoleNames(f), InterruptionQueue: queue,
	}
	if err := o.Validate(); err != nil {
		return fmt.Errorf("generating the controller's policy, %w", err)
	}
	doc := iampolicy.New(o)
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding the controller's policy, %w", err)
	}
	// The world's own document, with only controllerPolicy replaced: re-encoding the decoded
	// File would lose what the document says by an empty list (`accessEntries: []` means none,
	// a list left out means the demo world's).
	doc0 := map[string]any{"cluster": map[string]any{"name": f.Cluster.Name, "region": f.Cluster.Region}}
	if s.World != nil {
		text, err := os.ReadFile(s.opts.World)
		if err != nil {
			return fmt.Errorf("reading world file %s, %w", s.opts.World, err)
		}
		doc0 = map[string]any{}
		if err := yaml.Unmarshal(text, &doc0); err != nil {
			return fmt.Errorf("decoding world file %s, %w", s.opts.World, err)
		}
	}
	doc0["controllerPolicy"] = json.RawMessage(raw)
	out, err := json.MarshalIndent(doc0, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the world, %w", err)
	}
	if err := os.MkdirAll(s.opts.WorkDir, 0o755); err != nil {
		return fmt.Errorf("creating work directory, %w", err)
	}
	path, err := filepath.Abs(filepath.Join(s.opts.WorkDir, "world.json"))
	if err != nil {
		return fmt.Errorf("resolving the world's path, %w", err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("writing the world, %w", err)
	}
	s.emulatorWorld, s.ControllerPolicy, s.ControllerRoleARN = path, &doc, f.ControllerRole
	fmt.Fprintf(s.out, "Controller policy: joiner iam-policy --cluster %s --region %s --account %s --node-role %s%s (%d actions), in %s\n",
		o.ClusterName, o.Region, o.AccountID, strings.Join(o.NodeRoles, ","), map[bool]string{true: " --interruption-queue " + queue}[queue != ""],
		len(doc.Actions()), path)
	return nil
}

// nodeRoleNames are the world's node roles as `joiner iam-policy --node-role` takes them:
// /path/name, or the name alone at the root path.
func nodeRoleNames(f *world.File) []string {
	if f.NodeRoles == nil {
		return []string{iampolicy.DefaultNodeRole(f.Cluster.Name)}
	}
	var out []string
	for _, r := range f.NodeRoles {
		name, path := r.Name, r.Path
		if r.ARN != "" {
			rest := r.ARN[strings.Index(r.ARN, ":role/")+len(":role"):] // /path/name
			path, name = rest[:strings.LastIndex(rest, "/")+1], rest[strings.LastIndex(rest, "/")+1:]
		}
		if path == "" || path == "/" {
			out = append(out, name)
			continue
		}
		out = append(out, path+name)
	}
	return out
}

// flagValue is the last value args give flag (as --flag value or --flag=value); set is false
// when args do not give it.
func flagValue(args []string, flag string) (v string, set bool) {
	for i, a := range args {
		switch {
		case a == flag && i+1 < len(args):
			v, set = args[i+1], true
		case strings.HasPrefix(a, flag+"="):
			v, set = strings.TrimPrefix(a, flag+"="), true
		}
	}
	return v, set
}

// describeWorld is the world the emulator seeds, its defaults filled in: the world file's, or
// the demo world's, which awsemu seeds from its --cluster-name alone (its queue, node role and
// account are the defaults world.File.Validate fills in, the same defaults the emulator uses).
func (s *Stack) describeWorld() (*world.File, error) {
	if s.World != nil {
		return s.World, nil
	}
	cat, err := catalog.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the instance-type catalogue, %w", err)
	}
	f := &world.File{Cluster: world.Cluster{Name: s.opts.ClusterName, Region: s.opts.Region}}
	if err := f.Validate(cat); err != nil {
		return nil, fmt.Errorf("describing the demo world of cluster %s, %w", s.opts.ClusterName, err)
	}
	return f, nil
}

// configureAudit makes the API server write the chart ServiceAccount's requests to AuditLogPath.
func (s *Stack) configureAudit() error {
	dir, err := filepath.Abs(filepath.Join(s.opts.WorkDir, "audit"))
	if err != nil {
		return fmt.Errorf("resolving the audit directory, %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the audit directory, %w", err)
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	s.ServiceAccountUser = chartrbac.ServiceAccountUser(chartNamespace, chartRelease)
	if err := os.WriteFile(policy, []byte(chartrbac.AuditPolicyFor(s.ServiceAccountUser)), 0o600); err != nil {
		return fmt.Errorf("writing the audit policy, %w", err)
	}
	s.AuditLogPath = filepath.Join(dir, "audit.log")
	s.env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).Set("audit-log-path", s.AuditLogPath).Set("audit-log-format", "json")
	return nil
}

// applyChartRBAC renders the chart, applies its ServiceAccount and RBAC and writes the
// controller's kubeconfig with a token of the ServiceAccount.
func (s *Stack) applyChartRBAC(ctx context.Context) error {
	docs, err := chartrbac.Render(ctx, s.opts.Helm, s.opts.ChartDir, chartRelease, chartNamespace,
		"settings.clusterName="+s.opts.ClusterName, "settings.region="+s.opts.Region)
	if err != nil {
		return err
	}
	ns, name, err := chartrbac.Apply(ctx, s.Client, docs)
	if err != nil {
		return err
	}
	if user := chartrbac.ServiceAccountUser(ns, name); user != s.ServiceAccountUser {
		return fmt.Errorf("the chart's ServiceAccount is %s, but the audit policy logs %s", user, s.ServiceAccountUser)
	}
	cfg, err := chartrbac.Config(ctx, s.Config, ns, name, tokenTTL)
	if err != nil {
		return err
	}
	path, err := filepath.Abs(filepath.Join(s.opts.WorkDir, "joiner-controller.kubeconfig"))
	if err != nil {
		return fmt.Errorf("resolving the controller's kubeconfig path, %w", err)
	}
	if err := chartrbac.WriteKubeconfig(path, cfg); err != nil {
		return err
	}
	s.Chart, s.ControllerKubeconfigPath = docs, path
	fmt.Fprintf(s.out, "The controller runs as ServiceAccount %s/%s with the RBAC of %s; its requests are audited to %s\n", ns, name, s.opts.ChartDir, s.AuditLogPath)
	return nil
}

// Authorizations returns the emulator's authorization decisions for the controller role
// (Options.GeneratedPolicy), oldest first. It fails when the emulator's log dropped decisions
// of the controller role: a comparison with the policy would be incomplete. Decisions of other
// principals the log dropped do not matter.
func (s *Stack) Authorizations(ctx context.Context) ([]iampolicy.Decision, error) {
	if s.ControllerRoleARN == "" {
		return nil, fmt.Errorf("the stack was started without GeneratedPolicy: no controller role to read decisions of")
	}
	req, err := newGet(ctx, s.EmulatorURL+inspect.Prefix+"authorizations?role="+url.QueryEscape(s.ControllerRoleARN))
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's authorization log, %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the emulator's authorization log: %s", resp.Status)
	}
	var log inspect.Authorizations
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		return nil, fmt.Errorf("decoding the emulator's authorization log, %w", err)
	}
	if log.Dropped > 0 {
		return nil, fmt.Errorf("the emulator's authorization log dropped the %d oldest decisions of the controller role %s", log.Dropped, s.ControllerRoleARN)
	}
	out := make([]iampolicy.Decision, 0, len(log.Decisions))
	for _, d := range log.Decisions {
		out = append(out, iampolicy.Decision{Action: d.Action, Resource: d.Resource, Allowed: d.Allowed})
	}
	return out, nil
}
