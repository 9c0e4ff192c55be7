package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
)

// emulatedEKS serves the emulator's EKS; the seeded cluster gets a CA bundle, as every EKS
// cluster has one, unless withCA is false.
func emulatedEKS(t *testing.T, withCA bool) *eks.Client {
	t.Helper()
	e := emutest.Start(t)
	if withCA {
		e.Update(t, func(w *state.World) error {
			w.Regions["us-west-2"].Clusters[state.DefaultSeed().ClusterName].CertificateData = "Q0EtQlVORExF"
			return nil
		})
	}
	return e.Clients.EKS
}

func TestClusterFromEKS(t *testing.T) {
	api := emulatedEKS(t, true)
	name := state.DefaultSeed().ClusterName
	c, version, err := (&awsOptions{Region: "us-west-2"}).cluster(t.Context(), api, name)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != name || !strings.HasPrefix(c.Endpoint, "https://") || c.CIDR != "10.100.0.0/16" || c.DNS != "10.100.0.10" || version == "" {
		t.Errorf("cluster = %+v, version %q", c, version)
	}

	// Flags win over EKS.
	o := &awsOptions{Region: "us-west-2", ClusterEndpoint: "https://api.example", ServiceCIDR: "172.20.0.0/16", KubernetesVersion: "1.32"}
	c, version, err = o.cluster(t.Context(), api, name)
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "https://api.example" || c.DNS != "172.20.0.10" || version != "1.32" {
		t.Errorf("flags not kept: %+v, version %q", c, version)
	}

	if _, _, err := (&awsOptions{Region: "us-west-2"}).cluster(t.Context(), api, "nope"); err == nil || !strings.Contains(err.Error(), "describing EKS cluster nope") {
		t.Errorf("unknown cluster: %v", err)
	}

	// Nodes rendered without a CA bundle never join: refuse to start, naming the flag.
	if _, _, err := (&awsOptions{Region: "us-west-2"}).cluster(t.Context(), emulatedEKS(t, false), name); err == nil || !strings.Contains(err.Error(), "--cluster-ca-bundle") {
		t.Errorf("cluster without a CA bundle: %v, want an error naming --cluster-ca-bundle", err)
	}
}

func TestClusterDNS(t *testing.T) {
	for cidr, want := range map[string]string{"10.100.0.0/16": "10.100.0.10", "172.20.0.0/16": "172.20.0.10", "fd00:1::/108": "fd00:1::a"} {
		if got, err := clusterDNS(cidr); err != nil || got != want {
			t.Errorf("clusterDNS(%s) = %s, %v; want %s", cidr, got, err, want)
		}
	}
}
