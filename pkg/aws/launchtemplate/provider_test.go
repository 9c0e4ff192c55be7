package launchtemplate

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
)

func startEmulator(t *testing.T) (*ec2.Client, *clocktesting.FakeClock, string) {
	t.Helper()
	e := emutest.Start(t)
	var image string
	e.State.View(func(w *state.World) {
		for id := range w.Regions[e.Region].Images {
			image = id
			break
		}
	})
	return e.Clients.EC2, e.Clock, image
}

func names(t *testing.T, api *ec2.Client) []string {
	t.Helper()
	out, err := api.DescribeLaunchTemplates(t.Context(), &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, lt := range out.LaunchTemplates {
		got = append(got, aws.ToString(lt.LaunchTemplateName))
	}
	return got
}

// TestEnsureAndGarbageCollect: Ensure creates once and caches; GarbageCollect deletes only the
// cluster's own templates unused for UnusedTTL; a collected template is created again on demand.
func TestEnsureAndGarbageCollect(t *testing.T) {
	api, clk, image := startEmulator(t)
	p := NewProvider(api, "demo", clk)
	opts := func(userData string) Options {
		return Options{ClusterName: "demo", ImageID: image, UserData: userData, InstanceProfile: "KarpenterNodeRole-demo",
			Tags: map[string]string{"kubernetes.io/cluster/demo": "owned"}}
	}
	used, err := p.Ensure(t.Context(), opts("a"))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := p.Ensure(t.Context(), opts("b"))
	if err != nil {
		t.Fatal(err)
	}
	// A second Ensure of the same options is served from the cache; a new provider meeting an
	// existing template takes AlreadyExists as success.
	if again, err := NewProvider(api, "demo", clk).Ensure(t.Context(), opts("a")); err != nil || again != used {
		t.Fatalf("Ensure of an existing template: %q, %v", again, err)
	}
	other := opts("c")
	other.ClusterName, other.Tags = "other", map[string]string{"kubernetes.io/cluster/other": "owned"}
	otherName, err := NewProvider(api, "other", clk).Ensure(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}

	clk.Step(UnusedTTL - time.Hour)
	if _, err := p.Ensure(t.Context(), opts("a")); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Hour)
	deleted, err := p.GarbageCollect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{stale}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	left := names(t, api)
	for _, want := range []string{used, otherName} {
		if !containsString(left, want) {
			t.Errorf("%s was deleted; left %v", want, left)
		}
	}
	if _, err := p.Ensure(t.Context(), opts("b")); err != nil {
		t.Fatal(err)
	}
	if !containsString(names(t, api), stale) {
		t.Error("a collected template was not created again on demand")
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
