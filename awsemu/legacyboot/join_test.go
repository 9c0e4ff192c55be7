package legacyboot_test

import (
	"errors"
	"testing"

	boot "github.com/joinerhq/joiner/awsemu/legacyboot"
	"github.com/joinerhq/joiner/awsemu/state"
)

func TestMayJoin(t *testing.T) {
	const nodeRole = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	const controllerOnly = `
- rolearn: arn:aws:iam::111122223333:role/KarpenterControllerRole-demo
  username: system:node:{{EC2PrivateDNSName}}
  groups: [system:bootstrappers, system:nodes]`
	const nodeMapped = `
- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
  username: system:node:{{EC2PrivateDNSName}}
  groups: [system:bootstrappers, system:nodes]`
	tests := []struct {
		name     string
		role     string
		mode     string
		entries  map[string]string // principal → type
		mapRoles string
		reason   string // "" means may join
	}{
		{"EC2_LINUX access entry", nodeRole, "API_AND_CONFIG_MAP", map[string]string{nodeRole: state.AccessEntryEC2Linux}, "", ""},
		{"aws-auth maps the node role", nodeRole, "API_AND_CONFIG_MAP", nil, nodeMapped, ""},
		{"S1: aws-auth maps only the controller role", nodeRole, "API_AND_CONFIG_MAP", nil, controllerOnly, "Unauthorized"},
		{"no aws-auth and no entry", nodeRole, "API_AND_CONFIG_MAP", nil, "", "Unauthorized"},
		{"a STANDARD entry does not make a node", nodeRole, "API", map[string]string{nodeRole: state.AccessEntryStandard}, "", "Unauthorized"},
		{"API mode ignores aws-auth", nodeRole, "API", nil, nodeMapped, "Unauthorized"},
		{"CONFIG_MAP mode ignores access entries", nodeRole, "CONFIG_MAP", map[string]string{nodeRole: state.AccessEntryEC2Linux}, "", "Unauthorized"},
		{"role path is dropped from the instance's identity", "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", "CONFIG_MAP", nil, nodeMapped, ""},
		{"mapRoles written with the path never matches", nodeRole, "CONFIG_MAP", nil, `
- rolearn: arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo
  username: system:node:{{EC2PrivateDNSName}}
  groups: [system:bootstrappers, system:nodes]`, "Unauthorized"},
		{"mapped without system:nodes", nodeRole, "CONFIG_MAP", nil, `
- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
  username: system:node:{{EC2PrivateDNSName}}
  groups: [system:bootstrappers]`, "Forbidden"},
		{"no instance profile", "", "API_AND_CONFIG_MAP", map[string]string{nodeRole: state.AccessEntryEC2Linux}, "", "Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &state.Cluster{Name: "demo", AuthenticationMode: tt.mode, AccessEntries: map[string]*state.AccessEntry{}}
			for p, typ := range tt.entries {
				c.AccessEntries[p] = &state.AccessEntry{PrincipalARN: p, Type: typ}
			}
			err := boot.MayJoin(tt.role, c, tt.mapRoles)
			var je *boot.JoinError
			switch {
			case tt.reason == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.reason != "" && (!errors.As(err, &je) || je.Reason != tt.reason):
				t.Errorf("got %v, want %s", err, tt.reason)
			}
		})
	}
}
