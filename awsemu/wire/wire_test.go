package wire_test

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/wire"
)

func TestWildcard(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"m5.*", "m5.large", true},
		{"m5.*", "m5d.large", false},
		{"*.large", "c6g.large", true},
		{"t?.small", "t2.small", true},
		{"t?.small", "t3a.small", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"exact", "exact", true},
		{"Exact", "exact", false},
	}
	for _, tt := range tests {
		if got := wire.Wildcard(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Wildcard(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestFormLists(t *testing.T) {
	f := wire.NewForm(url.Values{
		"Filter.1.Name": {"tag:karpenter.sh/discovery"}, "Filter.1.Value.1": {"demo"}, "Filter.1.Value.2": {"other"},
		"Filter.2.Name": {"state"}, "Filter.2.Value.1": {"running"},
		"InstanceId.1": {"i-1"}, "InstanceId.2": {"i-2"}, "InstanceId.4": {"i-4"},
		"TagSpecification.1.ResourceType": {"instance"}, "TagSpecification.1.Tag.1.Key": {"a"}, "TagSpecification.1.Tag.1.Value": {"b"},
	})
	if diff := cmp.Diff([]wire.Filter{{Name: "tag:karpenter.sh/discovery", Values: []string{"demo", "other"}}, {Name: "state", Values: []string{"running"}}}, f.Filters()); diff != "" {
		t.Errorf("filters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"i-1", "i-2"}, f.List("InstanceId")); diff != "" {
		t.Errorf("list stops at the first gap (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]wire.TagSpecification{{ResourceType: "instance", Tags: []wire.Tag{{Key: "a", Value: "b"}}}}, f.TagSpecifications("TagSpecification")); diff != "" {
		t.Errorf("tag specifications (-want +got):\n%s", diff)
	}
}

func TestPage(t *testing.T) {
	var got [][2]int
	token := ""
	for {
		start, end, next, err := wire.Page("op", 7, 3, token)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, [2]int{start, end})
		if next == "" {
			break
		}
		token = next
	}
	if diff := cmp.Diff([][2]int{{0, 3}, {3, 6}, {6, 7}}, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if _, _, _, err := wire.Page("other", 7, 3, token); err == nil {
		t.Error("a token of another operation was accepted")
	}
}
