package iam

import (
	"encoding/xml"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/wire"
)

// TestAttachedPolicies: ListAttached{Role,User}Policies list the managed policies in attachment
// order, filtered by the path in their ARN, a page of MaxItems at a time.
func TestAttachedPolicies(t *testing.T) {
	arns := []string{
		"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
		"arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy",
		"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
	}
	for _, tc := range []struct {
		name     string
		form     url.Values
		want     []string
		wantNext bool
	}{
		{name: "all, no prefix", form: url.Values{},
			want: []string{"AmazonEKSWorkerNodePolicy", "AmazonEBSCSIDriverPolicy", "AmazonSSMManagedInstanceCore"}},
		{name: "a path prefix", form: url.Values{"PathPrefix": {"/service-role/"}}, want: []string{"AmazonEBSCSIDriverPolicy"}},
		{name: "no match", form: url.Values{"PathPrefix": {"/none/"}}, want: []string{}},
		{name: "first page", form: url.Values{"MaxItems": {"2"}},
			want: []string{"AmazonEKSWorkerNodePolicy", "AmazonEBSCSIDriverPolicy"}, wantNext: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, next, err := attachedPolicies(wire.NewForm(tc.form), "ListAttachedRolePolicies/r", arns)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, p := range got {
				names = append(names, p.PolicyName)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("policies (-want +got):\n%s", diff)
			}
			if (next != "") != tc.wantNext {
				t.Errorf("next marker %q, want one: %t", next, tc.wantNext)
			}
		})
	}
	if _, _, err := attachedPolicies(wire.NewForm(url.Values{"MaxItems": {"0"}}), "s", arns); err == nil {
		t.Error("MaxItems 0 accepted")
	}
}

// TestEmptyListEncoding: an empty page and a nil one encode alike (no AttachedPolicies element),
// so handlers may return either.
func TestEmptyListEncoding(t *testing.T) {
	encode := func(p []attachedPolicyXML) string {
		b, err := xml.Marshal(listAttachedRolePoliciesResponse{XMLNS: ns, Policies: p})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if nilPage, emptyPage := encode(nil), encode([]attachedPolicyXML{}); nilPage != emptyPage {
		t.Errorf("nil page %s, empty page %s", nilPage, emptyPage)
	}
}
