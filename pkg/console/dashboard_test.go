package console_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
	"github.com/prometheus/client_golang/prometheus"
)

// metricName is what a Joiner metric's name looks like in a string literal.
var metricName = regexp.MustCompile(`^(karpenter|joiner)_[a-z_]+$`)

// codeMetricNames returns every metric name Joiner's non-test Go code under root defines: string
// literals shaped like a metric name (prometheus.NewDesc, a helper's name argument) and the
// Namespace/Subsystem/Name of every Opts literal.
func codeMetricNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && metricName.MatchString(s) {
					names[s] = true
				}
			case *ast.CompositeLit:
				fields := map[string]string{}
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, ok1 := kv.Key.(*ast.Ident)
					lit, ok2 := kv.Value.(*ast.BasicLit)
					if ok1 && ok2 && lit.Kind == token.STRING {
						fields[key.Name], _ = strconv.Unquote(lit.Value)
					}
				}
				if fields["Name"] != "" && fields["Namespace"] != "" {
					names[prometheus.BuildFQName(fields["Namespace"], fields["Subsystem"], fields["Name"])] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestGrafanaDashboard: the dashboard is JSON Grafana can import, every query parses, and every
// metric it queries is one Joiner's code defines.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../charts/joiner/dashboards/joiner.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if dash.Title == "" || dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard needs a title, a uid and panels: %q %q %d", dash.Title, dash.UID, len(dash.Panels))
	}
	defined := codeMetricNames(t, "../../pkg")
	if !defined["joiner_nodeclaims_join_failed_total"] || !defined["karpenter_voluntary_disruption_decisions_total"] {
		t.Fatalf("the scan of pkg/ missed known metrics: %v", slices.Sorted(func(yield func(string) bool) {
			for n := range defined {
				if !yield(n) {
					return
				}
			}
		}))
	}
	used := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			e, err := metricsql.Parse(target.Expr)
			if err != nil {
				t.Errorf("panel %q: %q does not parse: %v", p.Title, target.Expr, err)
				continue
			}
			for _, name := range queriedMetrics(e) {
				used[name] = true
				if !defined[name] {
					t.Errorf("panel %q queries %s, which no Joiner code defines", p.Title, name)
				}
			}
		}
	}
	for _, want := range []string{"karpenter_pods_state", "joiner_nodeclaims_join_failed_total", "karpenter_voluntary_disruption_decisions_total"} {
		if !used[want] {
			t.Errorf("the dashboard does not query %s", want)
		}
	}
}

// queriedMetrics are the metric names a parsed query selects.
func queriedMetrics(e metricsql.Expr) []string {
	var names []string
	metricsql.VisitAll(e, func(e metricsql.Expr) {
		me, ok := e.(*metricsql.MetricExpr)
		if !ok {
			return
		}
		for _, group := range me.LabelFilterss {
			for _, f := range group {
				if f.Label == "__name__" {
					names = append(names, f.Value)
				}
			}
		}
	})
	return names
}
