package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

//go:embed assets
var assets embed.FS

// PollInterval is how often a page asks /api/PAGE for its new content.
const PollInterval = 5 * time.Second

// page is one page of the console: its path, title and what it computes.
type page struct {
	Path, Name, Title string
	data              func(ctx context.Context, c *Console) (any, error)
}

var pages = []page{
	{Path: "/", Name: "overview", Title: "Overview", data: func(ctx context.Context, c *Console) (any, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		o := s.overview()
		o.History = c.history.trend(s.now, o.CostPerHour)
		return o, nil
	}},
	{Path: "/nodes", Name: "nodes", Title: "Nodes", data: func(ctx context.Context, c *Console) (any, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		return s.nodeGroups(), nil
	}},
	{Path: "/pending", Name: "pending", Title: "Pending pods", data: func(ctx context.Context, c *Console) (any, error) {
		return c.pending(ctx)
	}},
	{Path: "/nodeclaims", Name: "nodeclaims", Title: "NodeClaims", data: func(ctx context.Context, c *Console) (any, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		return s.claims(), nil
	}},
	{Path: "/nodeclasses", Name: "nodeclasses", Title: "EC2NodeClasses", data: func(ctx context.Context, c *Console) (any, error) {
		return c.nodeClasses(ctx)
	}},
}

// Console serves the pages. It is safe for concurrent use: it holds what New was given, the cost
// history RecordCost samples, and the prices it last read of each NodePool.
type Console struct {
	history    costHistory
	lastPrices priceMemory
	kube       client.Reader
	cloud      cloudprovider.CloudProvider
	clock      clock.Clock
	log        logr.Logger
	tmpl       *template.Template
}

// New returns a console reading the cluster through kube and instance types and prices through
// cloud (nil: prices and pending-pod reasons are shown as unknown).
func New(kube client.Reader, cloud cloudprovider.CloudProvider, clk clock.Clock, log logr.Logger) (*Console, error) {
	tmpl, err := template.New("").Funcs(template.FuncMap{
		"price":  func(p float64) string { return fmt.Sprintf("$%.4f", p) },
		"status": func(s string) string { return strings.ToLower(s) },
		"ago": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		},
	}).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the console's templates, %w", err)
	}
	return &Console{kube: kube, cloud: cloud, clock: clk, log: log, tmpl: tmpl}, nil
}

// Handler serves the pages, /api/PAGE (JSON: the page's rendered <main> and its data), and
// /static/ (CSS and script). Every method but GET and HEAD is refused: the console is read-only.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets") // a constant path of the embedded tree
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	for _, p := range pages {
		pattern := "GET " + p.Path
		if p.Path == "/" {
			pattern = "GET /{$}"
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { c.servePage(w, r, p, false) })
		mux.HandleFunc("GET /api/"+p.Name, func(w http.ResponseWriter, r *http.Request) { c.servePage(w, r, p, true) })
	}
	return mux
}

type view struct {
	Page     page
	Pages    []page
	Data     any
	Error    string
	Updated  string
	PollMs   int64
	Explains int
}

func (c *Console) servePage(w http.ResponseWriter, r *http.Request, p page, api bool) {
	v := view{Page: p, Pages: pages, PollMs: PollInterval.Milliseconds(), Explains: MaxExplained, Updated: c.clock.Now().UTC().Format(time.RFC3339)}
	data, err := p.data(r.Context(), c)
	if err != nil {
		c.log.Error(err, "Reading the cluster for the console", "page", p.Name)
		v.Error = err.Error()
	}
	v.Data = data
	var main bytes.Buffer
	if err := c.tmpl.ExecuteTemplate(&main, p.Name, v); err != nil {
		c.log.Error(err, "Rendering a console page", "page", p.Name)
		http.Error(w, "rendering "+p.Name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if api {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"page": p.Name, "updated": v.Updated, "error": v.Error, "main": main.String(), "data": data})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := c.tmpl.ExecuteTemplate(w, "layout", struct {
		view
		Main template.HTML
	}{v, template.HTML(main.String())}); err != nil { // #nosec G203 -- rendered by html/template above
		c.log.Error(err, "Rendering the console layout", "page", p.Name)
	}
}
