package console

import (
	"bytes"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/joinerhq/joiner/pkg/explain"
)

// markup is HTML written as is. Only string constants are markup: anything read from the
// cluster, the cloud or the clock is written with text, attr or href, never converted to markup.
type markup string

// htmlWriter builds the console's HTML, in Go rather than with html/template (doc.go says why).
// Its escaping is html/template's for the contexts the console uses: text and every attribute
// value go through html.EscapeString (which escapes < > & ' "), and links are same-origin paths.
type htmlWriter struct {
	buf bytes.Buffer
}

func (w *htmlWriter) raw(m markup) { w.buf.WriteString(string(m)) }

func (w *htmlWriter) text(s string) { w.buf.WriteString(html.EscapeString(s)) }

func (w *htmlWriter) number(n int) { w.buf.WriteString(strconv.Itoa(n)) }

// attr writes ` name="value"`, value escaped.
func (w *htmlWriter) attr(name markup, value string) {
	w.raw(" ")
	w.raw(name)
	w.raw(`="`)
	w.text(value)
	w.raw(`"`)
}

// href writes ` href="path"`. Only a same-origin path (one "/" then not "/" or "\") is written;
// anything else, such as javascript: or //host, is written as "#", so that no link of the console
// runs script or leaves it.
func (w *htmlWriter) href(path string) {
	if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.HasPrefix(path, `/\`) {
		path = "#"
	}
	w.attr("href", path)
}

func (w *htmlWriter) String() string { return w.buf.String() }

func price(p float64) string { return fmt.Sprintf("$%.4f", p) }

// conditionClass is a condition status as a CSS class: true, false or unknown.
func conditionClass(status string) string { return strings.ToLower(status) }

// document is what the layout shows around a page's <main>.
type document struct {
	page    page
	nav     []page
	updated string // RFC 3339, UTC
	pollMs  int64
}

// writeLayout writes the whole HTML document of d.page, its <main> written by content.
func writeLayout(w *htmlWriter, d document, content func(*htmlWriter)) {
	w.raw(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	w.text(d.page.title)
	w.raw(` · Joiner</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css">
<script src="/static/console.js" defer></script>
</head>
<body`)
	w.attr("data-page", d.page.name)
	w.attr("data-poll-ms", strconv.FormatInt(d.pollMs, 10))
	w.raw(`>
<a class="skip" href="#main">Skip to content</a>
<header>
<strong>Joiner</strong>
<nav aria-label="Pages"><ul>`)
	for _, p := range d.nav {
		w.raw("\n<li><a")
		w.href(p.path)
		if p.name == d.page.name {
			w.raw(` aria-current="page"`)
		}
		w.raw(">")
		w.text(p.title)
		w.raw("</a></li>")
	}
	w.raw(`
</ul></nav>
<p class="updated" aria-live="polite">Updated <time id="updated">`)
	w.text(d.updated)
	w.raw(`</time></p>
</header>
<main id="main" tabindex="-1">`)
	content(w)
	w.raw(`</main>
</body>
</html>
`)
}

// writeError writes the alert a page starts with when its data could not be read.
func writeError(w *htmlWriter, msg string) {
	if msg == "" {
		return
	}
	w.raw(`<p class="error" role="alert">`)
	w.text(msg)
	w.raw("</p>")
}

// joined writes items separated by ", ".
func (w *htmlWriter) joined(items []string) {
	for i, s := range items {
		if i > 0 {
			w.raw(", ")
		}
		w.text(s)
	}
}

func writeOverview(w *htmlWriter, o *Overview) {
	if o == nil {
		return
	}
	w.raw(`
<h1>Overview</h1>
<section aria-labelledby="totals"><h2 id="totals">Now</h2>
<dl class="totals">
<div><dt>Cost per hour</dt><dd id="cost">`)
	w.text(price(o.CostPerHour))
	w.raw(`</dd></div>
<div><dt>Nodes</dt><dd>`)
	w.number(o.Nodes)
	w.raw(`</dd></div>
<div><dt>Pods</dt><dd>`)
	w.number(o.Pods)
	w.raw(`</dd></div>
<div><dt>Pending pods</dt><dd><a href="/pending">`)
	w.number(o.PendingPods)
	w.raw(`</a></dd></div>
<div><dt>NodeClaims</dt><dd>`)
	w.number(o.NodeClaims)
	w.raw(`</dd></div>
<div><dt>Failed joins</dt><dd`)
	if o.FailedJoins != 0 {
		w.raw(` class="bad"`)
	}
	w.raw(`><a href="/nodeclaims">`)
	w.number(o.FailedJoins)
	w.raw(`</a></dd></div>
</dl></section>
<section aria-labelledby="history-h"><h2 id="history-h">Cost over the last hours</h2>
`)
	writeCostTrend(w, o.History)
	w.raw(`
</section>
<section aria-labelledby="cost-h"><h2 id="cost-h">Cost per hour by NodePool and capacity type</h2>
<table><thead><tr><th scope="col">NodePool</th><th scope="col">Capacity type</th><th scope="col">NodeClaims</th><th scope="col">Per hour</th></tr></thead><tbody>`)
	for _, l := range o.Costs {
		w.raw("<tr><td>")
		w.text(l.NodePool)
		w.raw("</td><td>")
		w.text(l.CapacityType)
		w.raw("</td><td>")
		w.number(l.NodeClaims)
		w.raw("</td><td>")
		w.text(price(l.PerHour))
		w.raw("</td></tr>")
	}
	if len(o.Costs) == 0 {
		w.raw(`<tr><td colspan="4">No launched NodeClaim.</td></tr>`)
	}
	w.raw("\n</tbody></table>\n")
	if len(o.Unpriced) > 0 {
		w.raw("<p>No price known for: ")
		w.joined(o.Unpriced)
		w.raw(".</p>")
	}
	w.raw(`
</section>
<section aria-labelledby="pools"><h2 id="pools">NodePools</h2>
<ul>`)
	for _, row := range o.NodePoolRows {
		w.raw("<li><strong>")
		w.text(row.Name)
		w.raw("</strong>: ")
		if len(row.Problems) > 0 {
			w.raw("<ul>")
			for _, p := range row.Problems {
				w.raw(`<li class="bad">`)
				w.text(p)
				w.raw("</li>")
			}
			w.raw("</ul>")
		} else {
			w.raw("healthy")
		}
		w.raw("</li>")
	}
	if len(o.NodePoolRows) == 0 {
		w.raw("<li>No NodePool.</li>")
	}
	w.raw("</ul>\n</section>\n")
}

// writeCostTrend writes the Overview's cost chart, or says there is no sample yet (t nil).
func writeCostTrend(w *htmlWriter, t *CostTrend) {
	if t == nil {
		w.raw(`<p id="cost-history">No sample yet: the console samples the cost every minute while it runs.</p>`)
		return
	}
	w.raw(`<figure id="cost-history"`)
	w.attr("data-points", strconv.Itoa(len(t.Samples)))
	w.raw(`>
<svg viewBox="0 0 600 100" preserveAspectRatio="none" role="img"`)
	w.attr("aria-label", "Cost per hour from "+price(t.Min)+" to "+price(t.Max)+" over "+t.Over)
	w.raw("><polyline")
	w.attr("points", t.Points)
	w.raw("/></svg>\n<figcaption>Spent over the last ")
	w.text(t.Over)
	w.raw(`: <strong id="spent">`)
	w.text(price(t.Spent))
	w.raw("</strong> · cost per hour between ")
	w.text(price(t.Min))
	w.raw(" and ")
	w.text(price(t.Max))
	w.raw(" · since ")
	w.text(t.Since)
	w.raw("</figcaption>\n</figure>")
}

// writeUsage writes a node's requests against its allocatable as a meter and figures.
func writeUsage(w *htmlWriter, u Usage) {
	w.raw(`<meter min="0" max="100"`)
	w.attr("value", strconv.Itoa(u.Percent))
	w.attr("title", u.Requested+" of "+u.Allocatable)
	w.raw(">")
	w.number(u.Percent)
	w.raw(`%</meter> <span class="num">`)
	w.text(u.Requested + "/" + u.Allocatable)
	w.raw("</span>")
}

func writeNodes(w *htmlWriter, groups []NodeGroup) {
	w.raw("\n<h1>Nodes</h1>\n")
	for _, g := range groups {
		w.raw("<section><h2>")
		if g.NodePool != "" {
			w.raw("NodePool ")
			w.text(g.NodePool)
		} else {
			w.raw("Not from a NodePool")
		}
		w.raw(" (")
		w.number(len(g.Nodes))
		w.raw(`)</h2>
<table><thead><tr><th scope="col">Node</th><th scope="col">CPU requested</th><th scope="col">Memory requested</th><th scope="col">Pods</th><th scope="col">Type</th><th scope="col">Capacity</th><th scope="col">Zone</th><th scope="col">Price/h</th><th scope="col">Age</th><th scope="col">Disruption</th></tr></thead><tbody>`)
		for _, n := range g.Nodes {
			writeNodeRow(w, n)
		}
		w.raw("\n</tbody></table></section>")
	}
	if len(groups) == 0 {
		w.raw("<p>No node.</p>")
	}
	w.raw("\n")
}

func writeNodeRow(w *htmlWriter, n NodeRow) {
	w.raw("\n" + `<tr><th scope="row">`)
	w.text(n.Name)
	w.raw("</th><td>")
	writeUsage(w, n.CPU)
	w.raw("</td><td>")
	writeUsage(w, n.Memory)
	w.raw("</td><td>")
	w.number(n.Pods)
	w.raw("</td><td>")
	w.text(n.InstanceType)
	w.raw("</td><td>")
	w.text(n.CapacityType)
	w.raw("</td><td>")
	w.text(n.Zone)
	w.raw("</td><td>")
	if n.Priced {
		w.text(price(n.Price))
	} else {
		w.raw("?")
	}
	w.raw("</td><td>")
	w.text(n.Age)
	w.raw("</td><td><span")
	w.attr("class", "tag "+n.Disruption)
	w.raw(">")
	w.text(n.Disruption)
	w.raw("</span> ")
	w.text(n.Reason)
	w.raw("</td></tr>")
}

func writePending(w *htmlWriter, p *Pending) {
	if p == nil {
		return
	}
	w.raw("\n<h1>Pending pods (")
	w.number(p.Total)
	w.raw(")</h1>\n")
	writeError(w, p.Error)
	w.raw("\n")
	if p.Unexplained != 0 {
		w.raw("<p>")
		w.number(p.Unexplained)
		w.raw(" more groups of pods are not explained here; <code>joiner explain pod</code> explains any pod.</p>")
	}
	w.raw("\n")
	for _, g := range p.Groups {
		writePendingGroup(w, g)
	}
	if len(p.Groups) == 0 {
		w.raw("<p>No pending pod.</p>")
	}
	w.raw("\n")
}

func writePendingGroup(w *htmlWriter, g PendingGroup) {
	w.raw(`<article class="pod"><h2>`)
	switch {
	case g.Report != nil:
		w.text(g.Report.Pod)
	case len(g.Pods) > 0:
		w.text(g.Pods[0])
	}
	w.raw("</h2>\n")
	if len(g.Pods) > 1 {
		w.raw("<details><summary>")
		w.number(len(g.Pods))
		w.raw(" pods alike (same requests, node selection, tolerations, spread)</summary><p>")
		w.joined(g.Pods)
		w.raw("</p></details>")
	}
	w.raw("\n")
	if r := g.Report; r != nil {
		w.raw("<p>Outcome: <strong>")
		w.text(r.Outcome)
		w.raw("</strong></p>\n")
		for _, problem := range r.PodProblems {
			w.raw(`<p class="bad">`)
			w.text(problem)
			w.raw("</p>")
		}
		w.raw(`
<table><thead><tr><th scope="col">NodePool</th><th scope="col">Verdict</th><th scope="col">Reasons</th></tr></thead><tbody>`)
		for _, np := range r.NodePools {
			writeNodePoolVerdict(w, np)
		}
		w.raw("\n</tbody></table>")
	}
	w.raw("</article>")
}

func writeNodePoolVerdict(w *htmlWriter, np explain.NodePoolReport) {
	w.raw(`<tr><th scope="row">`)
	w.text(np.Name)
	w.raw("</th><td>")
	if np.Fits {
		w.raw(`<span class="tag candidate">fits</span>`)
	} else {
		w.raw(`<span class="tag blocked">does not fit</span>`)
	}
	w.raw("</td><td><ul>")
	for _, p := range np.Problems {
		w.raw("<li><code>")
		w.text(p.Kind)
		w.raw("</code> ")
		w.text(p.Message)
		w.raw("</li>")
	}
	for _, p := range np.Warnings {
		w.raw(`<li class="warn"><code>`)
		w.text(p.Kind)
		w.raw("</code> ")
		w.text(p.Message)
		w.raw("</li>")
	}
	if len(np.InstanceTypes) > 0 {
		t := np.InstanceTypes[0]
		w.raw("<li>cheapest: ")
		w.text(t.Name + " " + t.CapacityType + " " + t.Zone + " " + price(t.Price))
		w.raw("/h</li>")
	}
	w.raw("\n</ul></td></tr>")
}

func writeNodeClaims(w *htmlWriter, rows []ClaimRow) {
	w.raw("\n<h1>NodeClaims</h1>\n")
	written := 0
	for _, row := range rows {
		if row.Report == nil { // claims() always sets it
			continue
		}
		writeNodeClaim(w, row)
		written++
	}
	if written == 0 {
		w.raw("<p>No NodeClaim.</p>")
	}
	w.raw("\n")
}

func writeNodeClaim(w *htmlWriter, row ClaimRow) {
	r := row.Report
	w.raw(`<article class="claim`)
	if row.Failed {
		w.raw(" failed")
	}
	w.raw(`"><h2>`)
	w.text(r.Name)
	if row.Failed {
		w.raw(` <span class="tag blocked">join failed</span>`)
	}
	w.raw("</h2>\n<p>")
	w.text(r.NodePool + " · " + r.InstanceType + " · " + r.CapacityType + " · " + r.Zone)
	if row.Priced {
		w.text(" · " + price(row.Price) + "/h")
	}
	w.text(" · " + row.Age)
	if r.NodeName != "" {
		w.text(" · node " + r.NodeName)
	}
	w.raw("</p>\n" + `<ol class="timeline">`)
	for _, s := range r.Timeline {
		writeStep(w, s, len(r.Diagnosis) > 0)
	}
	w.raw("</ol>\n")
	if len(r.Diagnosis) > 0 {
		w.raw(`<section class="diagnosis"><h3>Diagnosis</h3><ul>`)
		for _, d := range r.Diagnosis {
			w.raw("<li>")
			w.text(d)
			w.raw("</li>")
		}
		w.raw("</ul></section>")
	}
	w.raw("\n</article>")
}

// writeStep writes one condition of a NodeClaim's timeline. A diagnosed NodeClaim's failure
// messages are in its Diagnosis: the timeline leaves them out, not to show them three times.
func writeStep(w *htmlWriter, s explain.Step, diagnosed bool) {
	w.raw("<li")
	w.attr("class", conditionClass(s.Status))
	w.raw("><strong>")
	w.text(s.Type)
	w.raw("</strong> ")
	w.text(s.Status)
	if s.Time != nil {
		w.raw(" <time>")
		w.text(s.Time.UTC().Format(time.RFC3339))
		w.raw("</time>")
	}
	if s.Reason != "" {
		w.text(" " + s.Reason)
	}
	if s.Message != "" && (!diagnosed || conditionClass(s.Status) == "true") {
		w.text(": " + s.Message)
	}
	w.raw("</li>")
}

func writeNodeClasses(w *htmlWriter, rows []NodeClassRow) {
	w.raw("\n<h1>EC2NodeClasses</h1>\n")
	for _, row := range rows {
		w.raw("<article><h2>")
		w.text(row.Name)
		w.raw(" <span")
		w.attr("class", "tag "+conditionClass(row.Ready))
		w.raw(">Ready=")
		w.text(row.Ready)
		w.raw("</span></h2>\n")
		if row.Role != "" {
			w.raw("<p>Node role: ")
			w.text(row.Role)
			w.raw("</p>")
		}
		w.raw(`
<table><thead><tr><th scope="col">Condition</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Message (finding and fix)</th></tr></thead><tbody>`)
		for _, c := range row.Conditions {
			w.raw("<tr")
			w.attr("class", conditionClass(string(c.Status)))
			w.raw(`><th scope="row">`)
			w.text(c.Type)
			w.raw("</th><td>")
			w.text(string(c.Status))
			w.raw("</td><td>")
			w.text(c.Reason)
			w.raw("</td><td>")
			w.text(c.Message)
			w.raw("</td></tr>")
		}
		w.raw("\n</tbody></table></article>")
	}
	if len(rows) == 0 {
		w.raw("<p>No EC2NodeClass.</p>")
	}
	w.raw("\n")
}
