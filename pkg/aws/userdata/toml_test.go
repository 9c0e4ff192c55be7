package userdata

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTOMLRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]any
	}{
		{name: "empty", in: "", want: map[string]any{}},
		{
			name: "tables, quoted keys, arrays, comments",
			in: `# Bottlerocket settings
[settings.kubernetes]
"cluster-name" = "demo" # trailing comment
max-pods = 110

[settings.kubernetes.node-labels]
"example.com/team" = 'platform'

[settings.kubernetes.node-taints]
"dedicated" = [
  "gpu:NoSchedule", # multi-line
  "gpu:NoExecute",
]
`,
			want: map[string]any{"settings": map[string]any{"kubernetes": map[string]any{
				"cluster-name": "demo", "max-pods": int64(110),
				"node-labels": map[string]any{"example.com/team": "platform"},
				"node-taints": map[string]any{"dedicated": []any{"gpu:NoSchedule", "gpu:NoExecute"}},
			}}},
		},
		{
			name: "unknown settings, dotted keys, inline tables, arrays of tables, multi-line strings, escapes",
			in: `[settings]
motd = "Hello\tfrom \"TOML\" \u00e9"
host-containers.admin.enabled = true
ntp = { time-servers = ["169.254.169.123"], options = [] }

[settings.bootstrap-containers.setup]
source = "example.com/setup:1"
user-data = """
line one
line \
  two"""
mode = 'once'

[[settings.container-registry.credentials]]
registry = "docker.io"
auth = 'abc=='

[[settings.container-registry.credentials]]
registry = "quay.io"

[settings.kernel.sysctl]
"net.ipv4.ip_forward" = "1"
ratio = 1.5
when = 1979-05-27T07:32:00Z
`,
			want: map[string]any{"settings": map[string]any{
				"motd":            "Hello\tfrom \"TOML\" é",
				"host-containers": map[string]any{"admin": map[string]any{"enabled": true}},
				"ntp":             map[string]any{"time-servers": []any{"169.254.169.123"}, "options": []any{}},
				"bootstrap-containers": map[string]any{"setup": map[string]any{
					"source": "example.com/setup:1", "user-data": "line one\nline two", "mode": "once",
				}},
				"container-registry": map[string]any{"credentials": []any{
					map[string]any{"registry": "docker.io", "auth": "abc=="},
					map[string]any{"registry": "quay.io"},
				}},
				"kernel": map[string]any{"sysctl": map[string]any{"net.ipv4.ip_forward": "1", "ratio": "1.5", "when": "1979-05-27T07:32:00Z"}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := parseTOML(tt.in)
			if err != nil {
				t.Fatalf("parseTOML: %v", err)
			}
			if diff := cmp.Diff(tt.want, doc.plain()); diff != "" {
				t.Errorf("parsed (-want +got):\n%s", diff)
			}
			written := writeTOML(doc)
			again, err := parseTOML(written)
			if err != nil {
				t.Fatalf("parsing what writeTOML wrote: %v\n%s", err, written)
			}
			if diff := cmp.Diff(tt.want, again.plain()); diff != "" {
				t.Errorf("round trip changed the document (-want +got):\n%s\nwritten:\n%s", diff, written)
			}
			if diff := cmp.Diff(written, writeTOML(again)); diff != "" {
				t.Errorf("writing is not stable (-first +second):\n%s", diff)
			}
		})
	}
}

func TestTOMLErrors(t *testing.T) {
	for _, in := range []string{
		"[settings\n",
		"a = \n",
		"a = \"unterminated\n",
		"a = 1\na = 2\n",
		"a = 1 b = 2\n",
		"a = [1, 2\n",
		"a = 1\n[a]\n",
	} {
		if _, err := parseTOML(in); err == nil {
			t.Errorf("parseTOML(%q) succeeded, want an error", in)
		}
	}
}
