package disruption

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// TestMultiGrows: multi-node consolidation over nodes in candidate order (one pod each, then by
// name), with a 2-CPU, 8Gi receiver (c7i.4x, do-not-disrupt) that has 2 CPU and 2Gi free.
// The prefix search Karpenter does fails on the first two: a pinned node first ends every
// prefix (the nodes behind it went one per pass), and a node replaced at a loss rode on the
// savings of the deletions before it.
func TestMultiGrows(t *testing.T) {
	for _, tt := range []struct {
		name  string
		nodes func(f *fixture)
		// want are the candidates of the command, of consolidation type kind, with replacements
		// new NodeClaims.
		want         []string
		kind         string
		replacements int
	}{{
		name: "pinned-first",
		nodes: func(f *fixture) {
			// Its pod selects a label only its node has: it can go nowhere.
			pinned := f.node("a-pinned", "c7i.1x", pod("pinned", "300m", "256Mi"))
			pinned.Node.Labels["example.com/local-disk"] = "true"
			pinned.Pods[0].Spec.NodeSelector = map[string]string{"example.com/local-disk": "true"}
			for _, name := range []string{"b1", "b2", "b3"} {
				f.node(name, "c7i.1x", pod(name, "300m", "256Mi"))
			}
		},
		want: []string{"b1", "b2", "b3"}, kind: "multi",
	}, {
		name: "replaced-at-a-loss",
		nodes: func(f *fixture) {
			f.node("b1", "c7i.1x", pod("b1", "300m", "256Mi"))
			f.node("b2", "c7i.1x", pod("b2", "300m", "256Mi"))
			// Fits on no other node; m7i.1x is already its cheapest type, and merged with b1
			// and b2 it would go to an r7i.1x ($0.08/h against its $0.06/h).
			f.node("c-memory", "m7i.1x", pod("memory", "900m", "3Gi"))
		},
		want: []string{"b1", "b2"}, kind: "multi",
	}, {
		name: "all-deletable",
		nodes: func(f *fixture) {
			for _, name := range []string{"b1", "b2", "b3"} {
				f.node(name, "c7i.1x", pod(name, "300m", "256Mi"))
			}
		},
		want: []string{"b1", "b2", "b3"}, kind: "multi",
	}, {
		name: "one-deletable",
		nodes: func(f *fixture) {
			f.node("b1", "c7i.1x", pod("b1", "300m", "256Mi"))
			f.node("c-memory", "m7i.1x", pod("memory", "900m", "3Gi"))
		},
		want: []string{"b1"}, kind: "single",
	}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture("10")
			receiver := f.node("z-receiver", "c7i.4x", pod("r1", "1", "3Gi"), pod("r2", "1", "3Gi"))
			receiver.Node.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
			tt.nodes(f)
			d, err := f.pass().decide()
			if err != nil {
				t.Fatal(err)
			}
			if d.cmd == nil {
				t.Fatalf("no command; notes %v", d.notes)
			}
			if diff := cmp.Diff(tt.want, d.cmd.nodeNames()); diff != "" {
				t.Errorf("candidates (-want +got), decided %q:\n%s", d.cmd.describe(), diff)
			}
			if d.cmd.method.consolidationType != tt.kind || len(d.cmd.replacements) != tt.replacements {
				t.Errorf("decided %s consolidation %q, want %s with %d replacements", d.cmd.method.consolidationType, d.cmd.describe(), tt.kind, tt.replacements)
			}
		})
	}
}

// TestMultiLooksPastStuckNodes: MaxMultiNodeCandidates pinned nodes come first in candidate
// order (one pod each, quiet as long, names first), then two nodes whose pods fit on the
// receiver. The first pass finds the pinned ones stuck and single-node consolidation takes b1;
// the next, told which were stuck, takes b1 and b2 together rather than one per pass.
func TestMultiLooksPastStuckNodes(t *testing.T) {
	f := newFixture("200")
	receiver := f.node("z-receiver", "c7i.4x", pod("r1", "1", "3Gi"), pod("r2", "1", "3Gi"))
	receiver.Node.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
	for i := range MaxMultiNodeCandidates {
		name := fmt.Sprintf("a-pinned-%03d", i)
		pinned := f.node(name, "c7i.1x", pod(name, "300m", "256Mi"))
		pinned.Node.Labels["example.com/local-disk"] = name
		pinned.Pods[0].Spec.NodeSelector = map[string]string{"example.com/local-disk": name}
	}
	f.node("b1", "c7i.1x", pod("b1", "300m", "256Mi"))
	f.node("b2", "c7i.1x", pod("b2", "300m", "256Mi"))

	var stuck map[string]bool
	for i, want := range []struct {
		nodes []string
		kind  string
	}{{[]string{"b1"}, "single"}, {[]string{"b1", "b2"}, "multi"}} {
		ps := f.pass()
		ps.stuckBefore = stuck
		d, err := ps.decide()
		if err != nil {
			t.Fatal(err)
		}
		if d.cmd == nil {
			t.Fatalf("pass %d: no command", i)
		}
		if diff := cmp.Diff(want.nodes, d.cmd.nodeNames()); diff != "" || d.cmd.method.consolidationType != want.kind {
			t.Errorf("pass %d decided %s %q, want %s of %v", i, d.cmd.method.consolidationType, d.cmd.describe(), want.kind, want.nodes)
		}
		if stuck = ps.stuck(); len(stuck) != MaxMultiNodeCandidates {
			t.Errorf("pass %d found %d nodes stuck, want the %d pinned", i, len(stuck), MaxMultiNodeCandidates)
		}
	}
}
