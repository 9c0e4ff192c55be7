package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/world"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// TestWorldCaptureCommand captures the demo world through AWS_ENDPOINT_URL, as an operator would
// capture an account, and checks the file it writes is a world the emulator takes.
func TestWorldCaptureCommand(t *testing.T) {
	e := emutest.Start(t)
	seed := e.Seed
	e.SetEnv(t)
	t.Setenv("CLUSTER_NAME", "")
	out := filepath.Join(t.TempDir(), "demo.world.yaml")
	_, stderr, err := runJoiner(t, "world", "capture", "--cluster", seed.ClusterName, "--region", world.DefaultRegion, "--no-cluster",
		"--node-role", seed.NodeRole, "--controller-role", "arn:aws:iam::"+seed.AccountID+":role/"+seed.ControllerRole, "-o", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	f, err := world.Decode(data, cat)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if f.Cluster.Name != seed.ClusterName || len(f.NodeRoles) != 1 || f.NodeRoles[0].Name != seed.NodeRole || len(f.Subnets) == 0 {
		t.Errorf("captured world:\n%s", data)
	}
	if strings.Contains(string(data), seed.ControllerAccessKey) {
		t.Errorf("the world holds the access key:\n%s", data)
	}

	_, _, err = runJoiner(t, "world", "capture", "--region", "us-west-2", "--no-cluster")
	if err == nil || !strings.Contains(err.Error(), "--cluster is required") {
		t.Errorf("without --cluster: err = %v, want one naming --cluster", err)
	}
}
