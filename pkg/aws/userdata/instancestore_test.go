package userdata

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// TestRenderInstanceStorePolicy checks, per family, the setting that makes the node put its
// kubelet and container runtime state on a RAID-0 array of the instance-store disks: AL2's
// bootstrap.sh --local-disks raid0, AL2023's NodeConfig spec.instance.localStorage.strategy,
// Bottlerocket's apiclient ephemeral-storage bootstrap command. Without the policy none is set.
func TestRenderInstanceStorePolicy(t *testing.T) {
	bottlerocketCommand := map[string]any{
		"commands": []any{
			[]any{"apiclient", "ephemeral-storage", "init"},
			[]any{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
		},
		"essential": true,
		"mode":      "always",
	}
	tests := []struct {
		family string
		// set reads the family's setting from the rendered userData; nil when absent.
		set  func(t *testing.T, userData string) any
		want any
	}{
		{family: awsv1.AMIFamilyAL2, set: func(t *testing.T, userData string) any {
			calls := findBootstrapCalls(userData)
			if len(calls) != 1 {
				t.Fatalf("found %d bootstrap.sh calls, want 1", len(calls))
			}
			if o, ok := calls[0].options["--local-disks"]; ok {
				return o.text
			}
			return nil
		}, want: "raid0"},
		{family: awsv1.AMIFamilyAL2023, set: func(t *testing.T, userData string) any {
			parts, err := parseMIME(userData)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				if p.mediaType() != contentTypeNodeConfig {
					continue
				}
				docs, err := yamlDocuments(p.body)
				if err != nil {
					t.Fatal(err)
				}
				spec, _ := docs[0]["spec"].(map[string]any)
				instance, _ := spec["instance"].(map[string]any)
				local, _ := instance["localStorage"].(map[string]any)
				if s, ok := local["strategy"]; ok {
					return s
				}
			}
			return nil
		}, want: "RAID0"},
		{family: awsv1.AMIFamilyBottlerocket, set: func(t *testing.T, userData string) any {
			doc, err := parseBottlerocket(userData)
			if err != nil {
				t.Fatal(err)
			}
			settings, _ := doc["settings"].(map[string]any)
			commands, _ := settings["bootstrap-commands"].(map[string]any)
			if c, ok := commands["000-mount-instance-storage"]; ok {
				return c
			}
			return nil
		}, want: bottlerocketCommand},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			for _, policy := range []awsv1.InstanceStorePolicy{"", awsv1.InstanceStorePolicyRAID0} {
				opts := baseOptions(tt.family, "")
				opts.InstanceStorePolicy = policy
				res, err := Render(opts)
				if err != nil {
					t.Fatalf("Render: %v", err)
				}
				got := tt.set(t, res.UserData)
				if policy == "" {
					if got != nil {
						t.Errorf("without instanceStorePolicy the userData sets %v, want nothing:\n%s", got, res.UserData)
					}
					continue
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("RAID0 setting (-want +got):\n%s\nuserData:\n%s", diff, res.UserData)
				}
			}
		})
	}
}

// TestRenderBottlerocketInstanceStoreKeepsCommands checks that the operator's own bootstrap
// commands are kept next to Joiner's, which sorts first.
func TestRenderBottlerocketInstanceStoreKeepsCommands(t *testing.T) {
	opts := baseOptions(awsv1.AMIFamilyBottlerocket, "[settings.bootstrap-commands.010-mine]\ncommands = [[\"echo\", \"hi\"]]\nmode = \"once\"\n")
	opts.InstanceStorePolicy = awsv1.InstanceStorePolicyRAID0
	res, err := Render(opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	doc, err := parseBottlerocket(res.UserData)
	if err != nil {
		t.Fatal(err)
	}
	commands := doc["settings"].(map[string]any)["bootstrap-commands"].(map[string]any)
	if !reflect.DeepEqual(commands["010-mine"], map[string]any{"commands": []any{[]any{"echo", "hi"}}, "mode": "once"}) {
		t.Errorf("the operator's command changed: %v", commands["010-mine"])
	}
	if _, ok := commands["000-mount-instance-storage"]; !ok || !strings.Contains(res.UserData, "ephemeral-storage") {
		t.Errorf("Joiner's command missing:\n%s", res.UserData)
	}
}
