package localstack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/aws/iampolicy"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// TestSeedPolicy: the controller reads the world's queue (the demo world's too) unless its flags
// name another; the world the emulator seeds holds the generated policy for the stack's
// cluster, account, node roles and queue as controllerPolicy, keeps the rest of the given world,
// and loads back as a valid world.
func TestSeedPolicy(t *testing.T) {
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	// accessEntries: [] (none) must stay none, not become the default entries.
	givenPath := filepath.Join(t.TempDir(), "prod.world.yaml")
	if err := os.WriteFile(givenPath, []byte(`cluster: {name: prod, accountId: "210987654321", interruptionQueue: prod-events}
controllerPolicy: {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "*", Resource: "*"}]}
nodeRoles:
  - name: Nodes
  - {name: Batch, path: /teams/}
  - arn: arn:aws:iam::210987654321:role/gpu/GPU
accessEntries: []
`), 0o600); err != nil {
		t.Fatal(err)
	}
	given, err := world.Load(givenPath, cat)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		world     *world.File
		args      []string
		wantRoles []string
		wantQueue string
	}{
		// The demo world has its queue, as joiner dev runs it: interruptions are handled there.
		{name: "the demo world", args: []string{"--leader-elect=false"}, wantRoles: []string{"KarpenterNodeRole-demo"}, wantQueue: "demo"},
		{name: "the demo world with a queue flag", args: []string{"--interruption-queue", "other"}, wantRoles: []string{"KarpenterNodeRole-demo"}, wantQueue: "other"},
		{name: "the demo world, interruptions off", args: []string{"--interruption-queue="}, wantRoles: []string{"KarpenterNodeRole-demo"}},
		{name: "a world", world: given, wantRoles: []string{"Nodes", "/teams/Batch", "/gpu/GPU"}, wantQueue: "prod-events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stack{World: tt.world, opts: Options{WorkDir: t.TempDir(), ClusterName: DefaultClusterName, Region: DefaultRegion, ControllerArgs: tt.args}, out: os.Stderr}
			if tt.world != nil {
				s.opts.ClusterName, s.opts.Region, s.opts.World = tt.world.Cluster.Name, tt.world.Cluster.Region, givenPath
			}
			queue, err := s.interruptionQueue()
			if err != nil {
				t.Fatal(err)
			}
			if queue != tt.wantQueue {
				t.Errorf("the controller reads queue %q, want %q", queue, tt.wantQueue)
			}
			s.InterruptionQueue = queue
			if err := s.seedPolicy(); err != nil {
				t.Fatal(err)
			}
			if s.emulatorWorld != filepath.Join(s.opts.WorkDir, "world.json") {
				t.Errorf("emulator world %s", s.emulatorWorld)
			}
			seeded, err := world.Load(s.emulatorWorld, cat)
			if err != nil {
				t.Fatalf("the seeded world does not load: %v", err)
			}
			var doc iampolicy.Document
			if err := json.Unmarshal(seeded.ControllerPolicy, &doc); err != nil {
				t.Fatal(err)
			}
			want := iampolicy.New(iampolicy.Options{ClusterName: seeded.Cluster.Name, Region: seeded.Cluster.Region,
				AccountID: seeded.Cluster.AccountID, NodeRoles: tt.wantRoles, InterruptionQueue: tt.wantQueue})
			got, _ := json.Marshal(doc)
			wantJSON, _ := json.Marshal(want)
			if string(got) != string(wantJSON) {
				t.Errorf("controllerPolicy =\n%s\nwant\n%s", got, wantJSON)
			}
			if !slices.Equal(s.ControllerPolicy.Actions(), want.Actions()) || s.ControllerRoleARN != seeded.ControllerRole {
				t.Errorf("stack reports policy %v and role %s", s.ControllerPolicy.Actions(), s.ControllerRoleARN)
			}
			if tt.world != nil && (len(seeded.NodeRoles) != 3 || seeded.Cluster.AccountID != "210987654321" || seeded.AccessEntries == nil || len(seeded.AccessEntries) != 0) {
				t.Errorf("the seeded world lost the given one's fields: %+v", seeded)
			}
		})
	}
}
