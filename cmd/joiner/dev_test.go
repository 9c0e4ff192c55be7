//go:build !nolocalstack

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevRefusesAMalformedWorldBeforeStarting: the world is validated whole before any program
// starts; the error names the field.
func TestDevRefusesAMalformedWorldBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.world.yaml")
	if err := os.WriteFile(path, []byte("cluster: {name: demo}\nsubnets: [{subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.1.0.0/24}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runJoiner(t, "dev", "--assets", dir, "--workdir", filepath.Join(dir, "work"), "--world", path)
	if err == nil || !strings.Contains(err.Error(), "cluster.vpcCidr") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error = %v, want one naming %s and cluster.vpcCidr", err, path)
	}
	if strings.Contains(out, "Starting") {
		t.Errorf("something started:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "work")); !os.IsNotExist(err) {
		t.Errorf("the work directory was created (%v)", err)
	}
}

func TestDevOnceNeedsTheSamples(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(path, []byte("cluster: {name: demo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runJoiner(t, "dev", "--assets", dir, "--world", path, "--once"); err == nil || !strings.Contains(err.Error(), "--samples") {
		t.Errorf("error = %v, want one asking for --samples", err)
	}
}

func TestManifestsOfAWorld(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s9.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for world, want := range map[string]string{
		filepath.Join(dir, "s9.world.yaml"):   filepath.Join(dir, "s9.yaml"),
		filepath.Join(dir, "prod.world.yaml"): "YOUR-MANIFESTS.yaml",
		filepath.Join(dir, "prod.json"):       "YOUR-MANIFESTS.yaml",
	} {
		if got := manifestsOf(world); got != want {
			t.Errorf("manifestsOf(%s) = %s, want %s", world, got, want)
		}
	}
}
