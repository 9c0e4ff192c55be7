package workload

import (
	"strings"
	"testing"
)

// fuzzMaxPods bounds the pods a fuzzed document may ask for, below MaxPods (which Input
// refuses with an error), so that each execution stays fast.
const fuzzMaxPods = 10_000

// FuzzRead reads arbitrary workload documents: Read and Input never panic, every rejection is
// an error with a message, every pod has a name and a namespace, and the catalogue keeps every
// instance type.
func FuzzRead(f *testing.F) {
	f.Add(`{"instanceTypes":[{"name":"m.large","cpu":2,"memoryMiB":8192,"pods":29,"arch":"arm64","zones":["z1"],"capacityTypes":["spot"],"price":0.1,"spotPrice":0.04}],"pods":[{"name":"web","count":2,"cpuMilli":250,"memoryMiB":64,"labels":{"app":"web"},"topologySpread":[{"topologyKey":"topology.kubernetes.io/zone"}],"podAntiAffinity":[{"topologyKey":"kubernetes.io/hostname","weight":5}]}]}`)
	f.Add(`{"nodePools":[{"name":"a","weight":10,"requirements":[{"key":"k","operator":"In","values":["v"]}],"limits":{"cpu":1.5,"memoryMiB":-1}}],"pods":[{"count":3}]}`)
	f.Add(`{"pods":[{"name":"x","count":-5,"nodeAffinity":[{"key":"","operator":"Bogus"}],"tolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule"}]}]}`)
	f.Add(`{"instanceTypes":[{"name":"t","cpu":1e300,"memoryMiB":9223372036854775807,"pods":-1,"overhead":{"cpuMilli":-9223372036854775808}}]}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := Read(strings.NewReader(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "decoding workload, ") {
				t.Fatalf("error not wrapped: %v", err)
			}
			return
		}
		total := 0
		for _, g := range file.Pods {
			total += max(g.Count, 1)
			if total > fuzzMaxPods || g.Count > fuzzMaxPods {
				return
			}
		}
		if got := len(file.Catalogue()); got != len(file.InstanceTypes) {
			t.Fatalf("catalogue has %d types, want %d", got, len(file.InstanceTypes))
		}
		in, err := file.Input()
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, p := range in.Pods {
			if p.Namespace == "" {
				t.Fatalf("pod %q has no namespace", p.Name)
			}
		}
	})
}
