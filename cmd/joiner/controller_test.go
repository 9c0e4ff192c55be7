package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func TestControllerRefusesWhatCannotRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "aws needs a region", args: []string{"controller", "--cluster-name=c"}, wantErr: "--cloud-provider aws needs --aws-region (AWS_REGION)"},
		{name: "aws bad service CIDR", args: []string{"controller", "--cluster-name=c", "--aws-region=us-west-2", "--service-cidr=10.100"}, wantErr: `service CIDR "10.100" is not a CIDR`},
		{name: "unknown provider", args: []string{"controller", "--cluster-name=c", "--cloud-provider=gcp"}, wantErr: `"gcp" is not a provider`},
		{name: "cluster name required", args: []string{"controller", "--cloud-provider=fake", "--cluster-name="}, wantErr: "--cluster-name (CLUSTER_NAME) is required"},
		{name: "interruption queue needs aws", args: []string{"controller", "--cloud-provider=fake", "--cluster-name=c", "--interruption-queue=q"}, wantErr: "--interruption-queue needs --cloud-provider aws"},
		{name: "bad log level", args: []string{"controller", "--cloud-provider=fake", "--cluster-name=c", "--log-level=loud"}, wantErr: "not a level"},
		{name: "feature gate not implemented", args: []string{"controller", "--cloud-provider=fake", "--cluster-name=c", "--feature-gates=NodeRepair=true"},
			wantErr: "Joiner does not implement NodeRepair yet"},
		{name: "unknown feature gate", args: []string{"controller", "--cloud-provider=fake", "--cluster-name=c", "--feature-gates=Drift=true"},
			wantErr: `unknown feature gate "Drift": the gates are NodeRepair, ReservedCapacity, SpotToSpotConsolidation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", "")
			_, _, err := runJoiner(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestControllerHelpSaysTheFakeIsAFake(t *testing.T) {
	out, _, err := runJoiner(t, "controller", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--cloud-provider", "launches nothing real", "[BATCH_IDLE_DURATION] (default 1s)", "[BATCH_MAX_DURATION] (default 10s)", "--leader-elect"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

func TestFakeInstanceTypes(t *testing.T) {
	catalogue := filepath.Join(t.TempDir(), "catalogue.json")
	if err := os.WriteFile(catalogue, []byte(`{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"amd64","zones":["z1","z2"],"price":0.1}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newCloudProvider(cloudProviderAWS, catalogue); err == nil {
		t.Error("--fake-instance-types with --cloud-provider aws was accepted")
	}
	cp, err := newCloudProvider(cloudProviderFake, catalogue)
	if err != nil {
		t.Fatal(err)
	}
	types, err := cp.GetInstanceTypes(t.Context(), &v1.NodePool{})
	if err != nil || len(types) != 1 {
		t.Fatalf("GetInstanceTypes = %d types, %v; want the catalogue's one", len(types), err)
	}
	it := types[0]
	if got := it.Requirements[corev1.LabelTopologyZone]; !slices.Equal(got, []string{"z1", "z2"}) {
		t.Errorf("zones = %v, want [z1 z2]", got)
	}
	if got := it.Requirements[corev1.LabelArchStable]; !slices.Equal(got, []string{"amd64"}) {
		t.Errorf("arch = %v, want [amd64]", got)
	}
	if len(it.Offerings) != 2 || it.Offerings[0].Price != 0.1 || !it.Offerings[0].Available {
		t.Errorf("offerings = %+v", it.Offerings)
	}
	if cpu := it.Capacity[corev1.ResourceCPU]; cpu.Value() != 2 {
		t.Errorf("capacity cpu = %s, want 2", cpu.String())
	}
}
