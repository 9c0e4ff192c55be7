package toml

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want map[string]any
	}{
		{
			name: "bottlerocket kubernetes settings",
			doc: `
# Bottlerocket user data
[settings.kubernetes]
cluster-name = "demo"
api-server = 'https://ABC.gr7.us-west-2.eks.amazonaws.com'
max-pods = 110
cluster-dns-ip = ["10.100.0.10"]

[settings.kubernetes.node-labels]
"karpenter.sh/capacity-type" = "on-demand"
team = "a"

[settings.kubernetes.node-taints]
"karpenter.sh/unregistered" = [":NoExecute"]
`,
			want: map[string]any{"settings": map[string]any{"kubernetes": map[string]any{
				"cluster-name":   "demo",
				"api-server":     "https://ABC.gr7.us-west-2.eks.amazonaws.com",
				"max-pods":       int64(110),
				"cluster-dns-ip": []any{"10.100.0.10"},
				"node-labels":    map[string]any{"karpenter.sh/capacity-type": "on-demand", "team": "a"},
				"node-taints":    map[string]any{"karpenter.sh/unregistered": []any{":NoExecute"}},
			}}},
		},
		{
			name: "dotted keys and inline tables",
			doc:  "settings.kubernetes.node-labels = { a = \"1\", \"b.c/d\" = \"2\" }\nsettings.host-containers.admin.enabled = true\n",
			want: map[string]any{"settings": map[string]any{
				"kubernetes":      map[string]any{"node-labels": map[string]any{"a": "1", "b.c/d": "2"}},
				"host-containers": map[string]any{"admin": map[string]any{"enabled": true}},
			}},
		},
		{
			name: "strings and escapes",
			doc:  "a = \"x\\ty\\u00e9\\\"\"\nb = '''\nraw \\n\n'''\nc = \"\"\"\nl1 \\\n   l2\"\"\"\n",
			want: map[string]any{"a": "x\ty\u00e9\"", "b": "raw \\n\n", "c": "l1 l2"},
		},
		{
			name: "integers",
			doc:  "a = 0\nb = -17\nc = 1_000\nd = 0xff\ne = 0o17\nf = 0b11\n",
			want: map[string]any{"a": int64(0), "b": int64(-17), "c": int64(1000), "d": int64(255), "e": int64(15), "f": int64(3)},
		},
		{
			name: "multi-line array with comments and trailing comma",
			doc:  "a = [\n  1, # one\n  \"two\",\n  [false],\n]\n",
			want: map[string]any{"a": []any{int64(1), "two", []any{false}}},
		},
		{
			name: "arrays of tables",
			doc:  "[[x]]\nn = 1\n[[x]]\nn = 2\n",
			want: map[string]any{"x": []any{map[string]any{"n": int64(1)}, map[string]any{"n": int64(2)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.doc)
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantLine int
	}{
		{name: "unquoted string", doc: "a = 1\nb = hello\n", wantLine: 2},
		{name: "duplicate key", doc: "a = 1\na = 2\n", wantLine: 2},
		{name: "unterminated string", doc: "a = \"x\n", wantLine: 1},
		{name: "table under an empty array", doc: "a = []\n[a.b]\n", wantLine: 2},
		{name: "table over value", doc: "a = 1\n[a]\n", wantLine: 2},
		{name: "missing equals", doc: "[s]\nkey \"v\"\n", wantLine: 2},
		{name: "float unsupported", doc: "a = 1.5\n", wantLine: 1},
		{name: "leading zero", doc: "a = 01\n", wantLine: 1},
		{name: "trailing garbage", doc: "a = 1 2\n", wantLine: 1},
		{name: "unclosed header", doc: "[a\n", wantLine: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.doc)
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("Parse() error = %v, want *Error", err)
			}
			if te.Line != tt.wantLine {
				t.Errorf("error line = %d (%v), want %d", te.Line, err, tt.wantLine)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{"[a]\nb = 1\n", "a = [1, {b = 'c'}]\n", "[[x]]\n[x.y]\nz = \"\"\"\nq\"\"\"\n", "a = []\n[a.b]\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		_, _ = Parse(doc) // must not panic
	})
}
