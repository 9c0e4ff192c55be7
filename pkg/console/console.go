package console

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
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

// page is one page of the console: its path, title, what it reads and how it renders that.
type page struct {
	path, name, title string
	// read returns the page's data (its typed nil with the error when the cluster could not be
	// read); /api/PAGE sends it as JSON.
	read func(ctx context.Context, c *Console) (any, error)
	// render writes the <main> content of what read returned.
	render func(w *htmlWriter, data any)
}

// newPage ties a page's reader to its renderer through the type of its data.
func newPage[T any](path, name, title string, read func(context.Context, *Console) (T, error), render func(*htmlWriter, T)) page {
	return page{
		path: path, name: name, title: title,
		read: func(ctx context.Context, c *Console) (any, error) { return read(ctx, c) },
		render: func(w *htmlWriter, data any) {
			d, _ := data.(T) // what read returned; another type renders as T's zero value
			render(w, d)
		},
	}
}

var pages = []page{
	newPage("/", "overview", "Overview", func(ctx context.Context, c *Console) (*Overview, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		o := s.overview()
		o.History = c.history.trend(s.now, o.CostPerHour)
		return o, nil
	}, writeOverview),
	newPage("/nodes", "nodes", "Nodes", func(ctx context.Context, c *Console) ([]NodeGroup, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		return s.nodeGroups(), nil
	}, writeNodes),
	newPage("/pending", "pending", "Pending pods", func(ctx context.Context, c *Console) (*Pending, error) {
		return c.pending(ctx)
	}, writePending),
	newPage("/nodeclaims", "nodeclaims", "NodeClaims", func(ctx context.Context, c *Console) ([]ClaimRow, error) {
		s, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		return s.claims(), nil
	}, writeNodeClaims),
	newPage("/nodeclasses", "nodeclasses", "EC2NodeClasses", func(ctx context.Context, c *Console) ([]NodeClassRow, error) {
		return c.nodeClasses(ctx)
	}, writeNodeClasses),
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
}

// New returns a console reading the cluster through kube and instance types and prices through
// cloud (nil: prices and pending-pod reasons are shown as unknown). It returns no error now that
// the pages are rendered in Go (there is no template left to parse).
func New(kube client.Reader, cloud cloudprovider.CloudProvider, clk clock.Clock, log logr.Logger) (*Console, error) {
	return &Console{kube: kube, cloud: cloud, clock: clk, log: log}, nil
}

// Handler serves the pages, /api/PAGE (JSON: the page's rendered <main> and its data), and
// /static/ (CSS and script). Every method but GET and HEAD is refused: the console is read-only.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets") // a constant path of the embedded tree
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	for _, p := range pages {
		pattern := "GET " + p.path
		if p.path == "/" {
			pattern = "GET /{$}"
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { c.servePage(w, r, p, false) })
		mux.HandleFunc("GET /api/"+p.name, func(w http.ResponseWriter, r *http.Request) { c.servePage(w, r, p, true) })
	}
	return mux
}

func (c *Console) servePage(w http.ResponseWriter, r *http.Request, p page, api bool) {
	updated := c.clock.Now().UTC().Format(time.RFC3339)
	data, err := p.read(r.Context(), c)
	var problem string
	if err != nil {
		c.log.Error(err, "Reading the cluster for the console", "page", p.name)
		problem = err.Error()
	}
	content := func(w *htmlWriter) {
		writeError(w, problem)
		p.render(w, data)
	}
	w.Header().Set("Cache-Control", "no-store")
	var out htmlWriter
	if api {
		content(&out)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"page": p.name, "updated": updated, "error": problem, "main": out.String(), "data": data})
		return
	}
	writeLayout(&out, document{page: p, nav: pages, updated: updated, pollMs: PollInterval.Milliseconds()}, content)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(out.buf.Bytes()) // fails only when the client went away
}
