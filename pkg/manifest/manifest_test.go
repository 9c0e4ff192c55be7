package manifest

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantKinds []string
		wantErr   string
	}{
		{name: "empty stream", input: "", wantKinds: nil},
		{
			name:      "documents with blanks and comments",
			input:     "---\n# comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: b}\n",
			wantKinds: []string{"ConfigMap", "NodePool"},
		},
		{
			name:      "list is flattened",
			input:     `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}]}`,
			wantKinds: []string{"Pod", "Service"},
		},
		{name: "missing kind", input: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "document 1 has no apiVersion or kind"},
		{name: "bad yaml", input: "apiVersion: v1\nkind: [\n", wantErr: "decoding document 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objects, err := Decode(strings.NewReader(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decode() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			var kinds []string
			for _, o := range objects {
				kinds = append(kinds, o.GetKind())
			}
			if strings.Join(kinds, ",") != strings.Join(tt.wantKinds, ",") {
				t.Errorf("kinds = %v, want %v", kinds, tt.wantKinds)
			}
		})
	}
}
