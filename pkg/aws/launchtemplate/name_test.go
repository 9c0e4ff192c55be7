package launchtemplate

import (
	"regexp"
	"testing"

	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

func TestName(t *testing.T) {
	base := Options{
		ClusterName: "demo", ImageID: "ami-1", UserData: "#!/bin/bash", InstanceProfile: "p",
		SecurityGroupIDs: []string{"sg-1", "sg-2"}, Tags: map[string]string{"a": "b", "c": "d"},
		MetadataOptions: &awsv1.MetadataOptions{HTTPTokens: ptr.To("required")},
	}
	name, err := Name(base)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^joiner/[0-9a-f]{32}$`).MatchString(name) {
		t.Errorf("name %q is not joiner/ and 32 hex digits", name)
	}
	tests := []struct {
		name   string
		mutate func(*Options)
		same   bool
	}{
		{name: "nothing", mutate: func(*Options) {}, same: true},
		{name: "security groups reordered", mutate: func(o *Options) { o.SecurityGroupIDs = []string{"sg-2", "sg-1"} }, same: true},
		{name: "tags rebuilt", mutate: func(o *Options) { o.Tags = map[string]string{"c": "d", "a": "b"} }, same: true},
		{name: "another cluster", mutate: func(o *Options) { o.ClusterName = "other" }},
		{name: "another AMI", mutate: func(o *Options) { o.ImageID = "ami-2" }},
		{name: "another userData", mutate: func(o *Options) { o.UserData += "\n" }},
		{name: "IMDS hop limit", mutate: func(o *Options) {
			o.MetadataOptions = &awsv1.MetadataOptions{HTTPTokens: ptr.To("required"), HTTPPutResponseHopLimit: ptr.To[int64](2)}
		}},
		{name: "a tag", mutate: func(o *Options) { o.Tags = map[string]string{"a": "b"} }},
	}
	for _, tt := range tests {
		o := base
		o.SecurityGroupIDs = append([]string(nil), base.SecurityGroupIDs...)
		tt.mutate(&o)
		got, err := Name(o)
		if err != nil {
			t.Fatal(err)
		}
		if (got == name) != tt.same {
			t.Errorf("%s: name %s vs %s, want same=%v", tt.name, got, name, tt.same)
		}
	}
	if base.SecurityGroupIDs[0] != "sg-1" {
		t.Error("Name changed its argument")
	}
}
