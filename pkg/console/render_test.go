package console

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joinerhq/joiner/pkg/explain"
)

// The oracle: testdata/ holds the html/template templates the console rendered its pages with
// until they were rendered in Go (doc.go says why). The templates and their functions are kept
// here, in a test, which does not reach the product binary, to prove that the Go renderer writes
// the same bytes with the same escaping.

// templatePage and templateView are the data the templates were executed with.
type templatePage struct{ Path, Name, Title string }

type templateView struct {
	Page    templatePage
	Pages   []templatePage
	Data    any
	Error   string
	Updated string
	PollMs  int64
	Main    template.HTML
}

func parseOracle(t *testing.T) *template.Template {
	t.Helper()
	tmpl, err := template.New("").Funcs(template.FuncMap{
		"price":  func(p float64) string { return fmt.Sprintf("$%.4f", p) },
		"status": func(s string) string { return strings.ToLower(s) },
		"ago": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		},
	}).ParseFiles("testdata/layout.html", "testdata/pages.html")
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// normalizeEscaping removes the two differences between html/template's escaping and
// html.EscapeString's, both equally safe:
//   - html/template writes "+" as "&#43;" (a defence against UTF-7 sniffing, which no browser
//     does on a page declared UTF-8), html.EscapeString leaves it;
//   - html/template writes NUL as U+FFFD, html.EscapeString leaves it (the HTML parser drops a NUL
//     in text and replaces it with U+FFFD in an attribute: it can open or close nothing).
//
// Every other byte must be equal. The replacements cannot hide a difference: in escaped output a
// literal "&" is always "&amp;", so "&#43;" can only be html/template's escape of "+".
func normalizeEscaping(fromTemplate, fromRenderer string) (string, string) {
	return strings.ReplaceAll(fromTemplate, "&#43;", "+"), strings.ReplaceAll(fromRenderer, "\x00", "\uFFFD")
}

// fixture is the data of every page (by page name) and the error every page shows.
type fixture struct {
	name    string
	problem string
	data    map[string]any
}

// busyCluster builds the data of a busy cluster whose every string is str(a name of the field): with
// distinct hostile strings, a field the renderer drops or escapes otherwise than the template
// shows in the comparison.
func busyCluster(str func(field string) string) map[string]any {
	at := time.Date(2026, 11, 27, 4, 30, 0, 0, time.FixedZone("CET", 3600))
	return map[string]any{
		"overview": &Overview{
			CostPerHour: 1.23456, Nodes: 3, Pods: 40, PendingPods: 5, NodeClaims: 4, FailedJoins: 1,
			Costs: []CostLine{
				{NodePool: str("cost nodepool 1"), CapacityType: str("cost capacity type 1"), NodeClaims: 2, PerHour: 0.0416},
				{NodePool: str("cost nodepool 2"), CapacityType: str("cost capacity type 2"), NodeClaims: 1, PerHour: 1.19296},
			},
			Unpriced: []string{str("unpriced 1"), str("unpriced 2")},
			NodePoolRows: []PoolRow{
				{Name: str("pool healthy")},
				{Name: str("pool sick"), Problems: []string{str("pool problem 1"), str("pool problem 2")}},
			},
			History: &CostTrend{
				Samples: []CostPoint{{At: at, PerHour: 1}, {At: at.Add(time.Minute), PerHour: 1.2}, {At: at.Add(2 * time.Minute), PerHour: 1.23456}},
				Spent:   0.0367, Over: str("trend over"), Since: str("trend since"), Min: 1, Max: 1.23456, Points: str("trend points"),
			},
		},
		"nodes": []NodeGroup{
			{Nodes: []NodeRow{{
				Name: str("unmanaged node"), InstanceType: str("unmanaged type"), CapacityType: str("unmanaged capacity"), Zone: str("unmanaged zone"),
				Age: str("unmanaged age"), Pods: 2, Disruption: str("unmanaged disruption"), Reason: str("unmanaged reason"),
				CPU:    Usage{Requested: str("unmanaged cpu requested"), Allocatable: str("unmanaged cpu allocatable"), Percent: 12},
				Memory: Usage{Requested: str("unmanaged memory requested"), Allocatable: str("unmanaged memory allocatable")},
			}}},
			{NodePool: str("node group"), Nodes: []NodeRow{
				{
					Name: str("node 1"), InstanceType: str("type 1"), CapacityType: str("capacity 1"), Zone: str("zone 1"), Price: 0.0208, Priced: true,
					Age: str("age 1"), Pods: 11, Disruption: str("disruption 1"), Reason: str("reason 1"),
					CPU: Usage{Requested: str("cpu requested 1"), Allocatable: str("cpu allocatable 1"), Percent: 100}, Memory: Usage{Requested: str("memory requested 1"), Allocatable: str("memory allocatable 1"), Percent: 55},
				},
				{Name: str("node 2"), Disruption: str("disruption 2"), Priced: true},
			}},
		},
		"pending": &Pending{
			Total: 7, Unexplained: 2, Error: str("pending error"),
			Groups: []PendingGroup{
				{Pods: []string{str("pod alone")}},
				{Pods: []string{str("pod 1"), str("pod 2"), str("pod 3")}, Report: &explain.PodReport{
					Pod: str("report pod"), Outcome: str("outcome"), PodProblems: []string{str("pod problem 1"), str("pod problem 2")},
					NodePools: []explain.NodePoolReport{
						{
							Name: str("fitting pool"), Fits: true,
							Warnings:      []explain.Problem{{Kind: str("warning kind"), Message: str("warning message")}},
							InstanceTypes: []explain.TypeFit{{Name: str("cheapest type"), Zone: str("cheapest zone"), CapacityType: str("cheapest capacity"), Price: 0.0104}, {Name: str("second type")}},
						},
						{Name: str("blocked pool"), Problems: []explain.Problem{{Kind: str("problem kind 1"), Message: str("problem message 1")}, {Kind: str("problem kind 2"), Message: str("problem message 2")}}},
					},
				}},
				{Pods: []string{str("pod 4")}, Report: &explain.PodReport{Pod: str("report without pools")}},
			},
		},
		"nodeclaims": []ClaimRow{
			{Failed: true, Priced: true, Price: 0.0832, Age: str("failed age"), Report: &explain.NodeClaimReport{
				Name: str("failed claim"), NodePool: str("failed nodepool"), InstanceType: str("failed type"), CapacityType: str("failed capacity"),
				Zone: str("failed zone"), NodeName: str("failed node"),
				Timeline: []explain.Step{
					{Type: str("step created"), Status: "True", Time: &at, Reason: str("created reason"), Message: str("shown: the step is True")},
					{Type: str("step launched"), Status: "False", Time: &at, Reason: str("launched reason"), Message: str("left out: in the diagnosis")},
					{Type: str("step unknown"), Status: str("unknown status"), Message: str("left out: not True")},
				},
				Diagnosis: []string{str("diagnosis 1"), str("diagnosis 2")},
			}},
			{Age: str("healthy age"), Report: &explain.NodeClaimReport{
				Name: str("healthy claim"), NodePool: str("healthy nodepool"),
				Timeline: []explain.Step{{Type: str("healthy step"), Status: "False", Message: str("shown: no diagnosis")}},
			}},
		},
		"nodeclasses": []NodeClassRow{
			{Name: str("class ready"), Role: str("role"), Ready: "True", Conditions: []metav1.Condition{
				{Type: str("condition 1"), Status: metav1.ConditionTrue, Reason: str("condition reason 1"), Message: str("condition message 1")},
				{Type: str("condition 2"), Status: metav1.ConditionStatus(str("condition status 2")), Reason: str("condition reason 2"), Message: str("condition message 2")},
			}},
			{Name: str("class bare"), Ready: str("ready status")},
		},
	}
}

// hostile is a string that breaks out of any context an unescaped value could land in: text, a
// quoted attribute, an element, a URL; it carries its field's name so that no two fields are alike.
func hostile(field string) string {
	return `<script>alert("` + field + `")</script>' onmouseover='x' javascript:alert(1) &amp; a+b &lt;` + "\x00"
}

func fixtures() []fixture {
	return []fixture{
		{name: "empty cluster", data: map[string]any{
			"overview": &Overview{}, "nodes": []NodeGroup{}, "pending": &Pending{}, "nodeclaims": []ClaimRow{}, "nodeclasses": []NodeClassRow{},
		}},
		{name: "unreadable cluster", problem: `listing nodepools, <b>"forbidden"</b> & 'denied' +1`, data: map[string]any{
			"overview": (*Overview)(nil), "nodes": []NodeGroup(nil), "pending": (*Pending)(nil), "nodeclaims": []ClaimRow(nil), "nodeclasses": []NodeClassRow(nil),
		}},
		{name: "busy cluster", data: busyCluster(func(field string) string { return field })},
		{name: "hostile strings", problem: hostile("error"), data: busyCluster(hostile)},
	}
}

// TestRendererMatchesTemplates renders every page's <main>, and every page's whole document, of
// every fixture with the templates and with the renderer, and requires the same bytes.
func TestRendererMatchesTemplates(t *testing.T) {
	tmpl := parseOracle(t)
	var nav []templatePage
	for _, p := range pages {
		nav = append(nav, templatePage{Path: p.path, Name: p.name, Title: p.title})
	}
	for _, f := range fixtures() {
		for i, p := range pages {
			t.Run(f.name+"/"+p.name, func(t *testing.T) {
				data, ok := f.data[p.name]
				if !ok {
					t.Fatalf("the fixture has no data for page %s", p.name)
				}
				v := templateView{Page: nav[i], Pages: nav, Data: data, Error: f.problem, Updated: "2026-11-27T04:30:00Z", PollMs: 5000}
				if f.problem != "" {
					v.Updated = hostile("updated")
				}
				var want bytes.Buffer
				if err := tmpl.ExecuteTemplate(&want, p.name, v); err != nil {
					t.Fatal(err)
				}
				content := func(w *htmlWriter) {
					writeError(w, f.problem)
					p.render(w, data)
				}
				var main htmlWriter
				content(&main)
				requireSame(t, "<main>", want.String(), main.String())

				v.Main = template.HTML(want.String()) // #nosec G203 -- rendered by html/template above
				want.Reset()
				if err := tmpl.ExecuteTemplate(&want, "layout", v); err != nil {
					t.Fatal(err)
				}
				var doc htmlWriter
				writeLayout(&doc, document{page: p, nav: pages, updated: v.Updated, pollMs: v.PollMs}, content)
				requireSame(t, "document", want.String(), doc.String())
				// Independent of the oracle: the only script element is the layout's own.
				if n := strings.Count(doc.String(), "<script"); n != 1 {
					t.Errorf("the document has %d script elements, want the layout's one", n)
				}
			})
		}
	}
}

func requireSame(t *testing.T, what, fromTemplate, fromRenderer string) {
	t.Helper()
	want, got := normalizeEscaping(fromTemplate, fromRenderer)
	if want == got {
		return
	}
	i := 0
	for i < min(len(want), len(got)) && want[i] == got[i] {
		i++
	}
	from := max(0, i-200)
	t.Errorf("the renderer's %s differs from the template's at byte %d:\ntemplate: %q\nrenderer: %q", what, i, want[from:min(len(want), i+200)], got[from:min(len(got), i+200)])
}

// TestRendererEscapesHostileValues checks, without the oracle, that no hostile value comes out
// unescaped, and that a link is only ever a same-origin path.
func TestRendererEscapesHostileValues(t *testing.T) {
	var w htmlWriter
	for _, p := range pages {
		p.render(&w, busyCluster(hostile)[p.name])
	}
	out := w.String()
	for _, unsafe := range []string{"<script", `alert("`, `' onmouseover`} {
		if strings.Contains(out, unsafe) {
			t.Errorf("a hostile value came out unescaped: the pages contain %q", unsafe)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;alert(&#34;failed claim&#34;)&lt;/script&gt;&#39; onmouseover=&#39;x&#39; javascript:alert(1) &amp;amp; a+b &amp;lt;") {
		t.Errorf("the failed claim's hostile name is not escaped as html.EscapeString escapes it:\n%s", out)
	}
	for _, tc := range []struct{ path, want string }{
		{"/nodes", ` href="/nodes"`},
		{"/", ` href="/"`},
		{`/a"b`, ` href="/a&#34;b"`},
		{"javascript:alert(1)", ` href="#"`},
		{"//evil.example/", ` href="#"`},
		{`/\evil.example/`, ` href="#"`},
		{"https://evil.example/", ` href="#"`},
		{"", ` href="#"`},
	} {
		var w htmlWriter
		w.href(tc.path)
		if w.String() != tc.want {
			t.Errorf("href(%q) = %s, want %s", tc.path, w.String(), tc.want)
		}
	}
}
