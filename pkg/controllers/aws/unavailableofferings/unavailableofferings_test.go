package unavailableofferings_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testkit"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/controllers/aws/unavailableofferings"
)

// namespace creates a namespace for the test.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), ns) })
	return name
}

// start runs the controller until the test ends.
func start(t *testing.T, c *unavailableofferings.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// record returns the ConfigMap's data, nil when there is none.
func record(t *testing.T, ns string) map[string]string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: unavailableofferings.ConfigMapName}, cm); err != nil {
		return nil
	}
	return cm.Data
}

// TestNewLeaderStartsFromTheRecord: the leader records an offering EC2 refused; a new leader
// (the controller restarted) has it unavailable as it starts, with the expiry of the first
// refusal, and no longer after it; a replica not elected reads but does not write. (Each new
// leader used to start with an empty record and launch into the refused pools again.)
func TestNewLeaderStartsFromTheRecord(t *testing.T) {
	ns := namespace(t, "record")
	clk := clocktesting.NewFakeClock(time.Now())
	first := instancetype.NewUnavailableOfferings(clk)
	start(t, unavailableofferings.NewController(env.Client, first, ns, clk))
	first.MarkUnavailable("m7i.large", "us-west-2a", "spot")
	key := "m7i.large_us-west-2a_spot"
	testkit.Poll(t, 10*time.Second, "the refused offering recorded", func() bool { return record(t, ns)[key] != "" })
	if at, err := time.Parse(time.RFC3339, record(t, ns)[key]); err != nil || at.Sub(clk.Now()) > instancetype.UnavailableTTL {
		t.Errorf("recorded expiry %q (%v), want within UnavailableTTL of now", record(t, ns)[key], err)
	}

	// A standby replica reads the record but writes nothing until elected.
	clk.Step(time.Minute)
	standby := instancetype.NewUnavailableOfferings(clk)
	c := unavailableofferings.NewController(env.Client, standby, ns, clk)
	elected := make(chan struct{})
	c.SetElected(elected)
	start(t, c)
	testkit.Poll(t, 10*time.Second, "the standby replica reads the record", func() bool { return standby.IsUnavailable("m7i.large", "us-west-2a", "spot") })
	standby.MarkUnavailable("c7i.large", "us-west-2b", "on-demand")
	time.Sleep(200 * time.Millisecond) // a write would be immediate: give it the chance to go wrong
	if _, ok := record(t, ns)["c7i.large_us-west-2b_on-demand"]; ok {
		t.Error("a replica not elected wrote the record")
	}
	close(elected)
	testkit.Poll(t, 10*time.Second, "the elected replica writes its record", func() bool { return record(t, ns)["c7i.large_us-west-2b_on-demand"] != "" })
	if record(t, ns)[key] == "" {
		t.Error("the elected replica dropped the offering it read from the record")
	}

	// The first refusal's expiry holds: two more minutes and it is available again.
	clk.Step(instancetype.UnavailableTTL - time.Minute + time.Second)
	if standby.IsUnavailable("m7i.large", "us-west-2a", "spot") {
		t.Error("an offering read from the record is still unavailable after its expiry")
	}
	clk.Step(unavailableofferings.SyncInterval)
	testkit.Poll(t, 10*time.Second, "the expired offering leaves the record", func() bool { _, ok := record(t, ns)[key]; return !ok })
}

// TestUnreadableEntries: entries that cannot be read are skipped and named, with the fix; the
// others are read.
func TestUnreadableEntries(t *testing.T) {
	ns := namespace(t, "unreadable")
	clk := clocktesting.NewFakeClock(time.Now())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: unavailableofferings.ConfigMapName}, Data: map[string]string{
		"m7i.large_us-west-2a_spot": clk.Now().Add(time.Minute).UTC().Format(time.RFC3339),
		"m7i.large_us-west-2b":      clk.Now().Add(time.Minute).UTC().Format(time.RFC3339),
		"c7i.large_us-west-2a_spot": "tomorrow",
		"r7i.large_us-west-2a_spot": clk.Now().Add(-time.Second).UTC().Format(time.RFC3339),
	}}
	if err := env.Client.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	offerings := instancetype.NewUnavailableOfferings(clk)
	err := unavailableofferings.NewController(env.Client, offerings, ns, clk).Load(t.Context())
	for _, want := range []string{`key "m7i.large_us-west-2b" is not <instance type>_<zone>_<capacity type>: delete it`, `key "c7i.large_us-west-2a_spot": value "tomorrow" is not an RFC 3339 time`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %s", err, want)
		}
	}
	got := offerings.Entries()
	if len(got) != 1 || got[0].InstanceType != "m7i.large" || got[0].Zone != "us-west-2a" || got[0].CapacityType != "spot" {
		t.Errorf("read %+v, want only m7i.large us-west-2a spot (the expired one left out)", got)
	}
}
