package provisioning

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestEventNote: a FailedScheduling note stays within the API server's 1 KiB limit for events
// (a longer one is refused, and the pod never hears why it waits), keeps the reasons in order,
// and counts those left out.
func TestEventNote(t *testing.T) {
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("nodepool \"pool-%02d\": IncompatibleRequirements: karpenter.sh/nodepool In [pool-%02d] conflicts with karpenter.sh/nodepool In [web]", i, i))
	}
	for _, tc := range []struct {
		name  string
		parts []string
		want  []string
	}{
		{"short", []string{"a: b", "c: d"}, []string{"Failed to schedule pod ns/p, a: b; c: d"}},
		{"many pools", many, []string{"Failed to schedule pod ns/p, " + many[0] + "; " + many[1], "more NodePools (joiner explain pod lists them)"}},
		{"one huge reason", []string{strings.Repeat("é", 2000)}, []string{"Failed to schedule pod ns/p, éé", "..."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			note := eventNote("Failed to schedule pod ns/p, ", tc.parts)
			if len(note) > maxEventNote || !utf8.ValidString(note) {
				t.Fatalf("note of %d bytes (valid UTF-8 %v), want at most %d", len(note), utf8.ValidString(note), maxEventNote)
			}
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("note %q lacks %q", note, w)
				}
			}
		})
	}
	note := eventNote("Failed to schedule pod ns/p, ", many)
	kept := strings.Count(note, "nodepool \"")
	if want := fmt.Sprintf("and %d more NodePools", len(many)-kept); !strings.Contains(note, want) {
		t.Errorf("note keeps %d reasons but does not say %q: %q", kept, want, note)
	}
}
