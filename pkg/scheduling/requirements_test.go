package scheduling

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

func mustReq(t testing.TB, key, op string, values ...string) *Requirement {
	t.Helper()
	r, err := NewRequirement(key, op, values)
	if err != nil {
		t.Fatalf("building requirement: %v", err)
	}
	return r
}

func TestRequirementHas(t *testing.T) {
	tests := []struct {
		name   string
		op     string
		values []string
		has    map[string]bool
		absent bool
	}{
		{"in", "In", []string{"a", "b"}, map[string]bool{"a": true, "b": true, "c": false}, false},
		{"notin", "NotIn", []string{"a"}, map[string]bool{"a": false, "b": true}, true},
		{"exists", "Exists", nil, map[string]bool{"a": true, "": true}, false},
		{"doesnotexist", "DoesNotExist", nil, map[string]bool{"a": false}, true},
		{"gt", "Gt", []string{"5"}, map[string]bool{"5": false, "6": true, "x": false, "-1": false}, false},
		{"gte", "Gte", []string{"5"}, map[string]bool{"4": false, "5": true, "6": true}, false},
		{"lt", "Lt", []string{"5"}, map[string]bool{"4": true, "5": false}, false},
		{"lte", "Lte", []string{"5"}, map[string]bool{"5": true, "6": false}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustReq(t, "k", tt.op, tt.values...)
			got := map[string]bool{}
			for v := range tt.has {
				got[v] = r.Has(v)
			}
			if diff := cmp.Diff(tt.has, got); diff != "" {
				t.Errorf("Has (-want +got):\n%s", diff)
			}
			if r.AllowsAbsent() != tt.absent {
				t.Errorf("AllowsAbsent = %v, want %v", r.AllowsAbsent(), tt.absent)
			}
		})
	}
}

func TestRequirementIntersects(t *testing.T) {
	type rq struct {
		op     string
		values []string
	}
	tests := []struct {
		name string
		a, b rq
		want bool
	}{
		{"in overlap", rq{"In", []string{"a", "b"}}, rq{"In", []string{"b", "c"}}, true},
		{"in disjoint", rq{"In", []string{"a"}}, rq{"In", []string{"c"}}, false},
		{"in vs notin same", rq{"In", []string{"a"}}, rq{"NotIn", []string{"a"}}, false},
		{"notin vs notin", rq{"NotIn", []string{"a"}}, rq{"NotIn", []string{"b"}}, true},
		{"doesnotexist vs notin", rq{"DoesNotExist", nil}, rq{"NotIn", []string{"a"}}, true},
		{"doesnotexist vs exists", rq{"DoesNotExist", nil}, rq{"Exists", nil}, false},
		{"doesnotexist vs in", rq{"DoesNotExist", nil}, rq{"In", []string{"a"}}, false},
		{"gt vs in above", rq{"Gt", []string{"5"}}, rq{"In", []string{"6", "x"}}, true},
		{"gt vs in below", rq{"Gt", []string{"5"}}, rq{"In", []string{"5", "x"}}, false},
		{"gt vs lt empty", rq{"Gt", []string{"5"}}, rq{"Lt", []string{"6"}}, false},
		{"gt vs lt one", rq{"Gt", []string{"5"}}, rq{"Lt", []string{"7"}}, true},
		{"gte vs lte equal", rq{"Gte", []string{"5"}}, rq{"Lte", []string{"5"}}, true},
		{"gt vs lt excluded", rq{"Gt", []string{"5"}}, rq{"NotIn", []string{"6"}}, true},
		{"range fully excluded", rq{"Gte", []string{"6"}}, rq{"NotIn", []string{"6"}}, true},
		{"exists vs exists", rq{"Exists", nil}, rq{"Exists", nil}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := mustReq(t, "k", tt.a.op, tt.a.values...), mustReq(t, "k", tt.b.op, tt.b.values...)
			if got := a.Intersects(b); got != tt.want {
				t.Errorf("a.Intersects(b) = %v, want %v", got, tt.want)
			}
			if got := b.Intersects(a); got != tt.want {
				t.Errorf("b.Intersects(a) = %v, want %v", got, tt.want)
			}
		})
	}
	// A bounded range that every value is excluded from is empty.
	a := mustReq(t, "k", "Gt", "5").Intersect(mustReq(t, "k", "Lt", "8"))
	if a.Intersect(mustReq(t, "k", "NotIn", "6", "7")).hasPresentValue() {
		t.Errorf("6..7 minus {6,7} should be empty")
	}
}

func TestRequirementsCompatibleAndMatches(t *testing.T) {
	node := Requirements{}
	node.Add(mustReq(t, "zone", "In", "a", "b"))
	node.Add(mustReq(t, "arch", "In", "amd64"))
	tests := []struct {
		name string
		pod  []*Requirement
		want bool
	}{
		{"subset", []*Requirement{mustReq(t, "zone", "In", "a")}, true},
		{"conflict", []*Requirement{mustReq(t, "arch", "In", "arm64")}, false},
		{"undefined key notin", []*Requirement{mustReq(t, "team", "NotIn", "x")}, true},
		{"undefined key in", []*Requirement{mustReq(t, "team", "In", "x")}, false},
		{"undefined key doesnotexist", []*Requirement{mustReq(t, "team", "DoesNotExist")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := Requirements{}
			for _, r := range tt.pod {
				pod.Add(r)
			}
			if got := node.Compatible(pod) == nil; got != tt.want {
				t.Errorf("Compatible = %v, want %v", got, tt.want)
			}
		})
	}
	if !FromLabels(map[string]string{"a": "1"}).Matches(map[string]string{"a": "1", "b": "2"}) {
		t.Errorf("label requirements should match a superset of labels")
	}
}

func TestRequirementsToAPIRoundTrip(t *testing.T) {
	in := []v1.NodeSelectorRequirementWithMinValues{
		{Key: "a", Operator: v1.NodeSelectorOpIn, Values: []string{"x", "y"}, MinValues: new(2)},
		{Key: "b", Operator: v1.NodeSelectorOpNotIn, Values: []string{"z"}},
		{Key: "c", Operator: v1.NodeSelectorOpGt, Values: []string{"4"}},
		{Key: "d", Operator: v1.NodeSelectorOpDoesNotExist},
		{Key: "e", Operator: v1.NodeSelectorOpExists},
	}
	rs, err := FromNodePoolRequirements(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, rs.ToAPI()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func FuzzNewRequirement(f *testing.F) {
	f.Add("In", "a", "5")
	f.Add("Gt", "5", "")
	f.Add("Lte", "-3", "x")
	f.Fuzz(func(t *testing.T, op, v1s, v2s string) {
		a, err := NewRequirement("k", op, []string{v1s})
		if err != nil {
			return
		}
		b, err := NewRequirement("k", "In", []string{v1s, v2s})
		if err != nil {
			t.Fatalf("In must parse: %v", err)
		}
		in := a.Intersect(b)
		for _, v := range []string{v1s, v2s} {
			if in.Has(v) != (a.Has(v) && b.Has(v)) {
				t.Fatalf("intersection disagrees on %q: %s vs %s", v, a, b)
			}
		}
		if a.Intersects(b) != b.Intersects(a) {
			t.Fatalf("Intersects not symmetric")
		}
	})
}
