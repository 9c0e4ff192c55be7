package instance

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLeaked(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	instances := []Described{
		{ID: "i-owned", LaunchTime: now.Add(-time.Hour), State: "running"},
		{ID: "i-leaked", LaunchTime: now.Add(-time.Hour), State: "running"},
		{ID: "i-young", LaunchTime: now.Add(-10 * time.Second), State: "pending"},
		{ID: "i-going", LaunchTime: now.Add(-time.Hour), State: "shutting-down"},
		{ID: "i-gone", LaunchTime: now.Add(-time.Hour), State: "terminated"},
		{ID: "i-stopped", LaunchTime: now.Add(-time.Hour), State: "stopped"},
		{ID: "i-adoptable", LaunchTime: now.Add(-time.Hour), State: "running", NodeClaim: "default-launching"},
		{ID: "i-duplicate", LaunchTime: now.Add(-time.Hour), State: "running", NodeClaim: "default-named"},
	}
	got := Leaked(instances, []string{"aws:///us-west-2a/i-owned", "not-a-provider-id"}, []string{"default-launching"}, now, GarbageCollectionGrace)
	if diff := cmp.Diff([]string{"i-duplicate", "i-leaked", "i-stopped"}, got); diff != "" {
		t.Errorf("Leaked (-want +got):\n%s", diff)
	}
}

func TestInstanceID(t *testing.T) {
	for in, want := range map[string]string{
		"aws:///us-west-2a/i-0123456789abcdef0": "i-0123456789abcdef0",
		"aws:///i-0123":                         "i-0123",
		"fake:///us-west-2a/i-1":                "",
		"aws:///us-west-2a/":                    "",
	} {
		if got := InstanceID(in); got != want {
			t.Errorf("InstanceID(%q) = %q, want %q", in, got, want)
		}
	}
}
