package boot

import (
	"testing"
)

const (
	nodeRole       = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	controllerRole = "arn:aws:iam::111122223333:role/KarpenterControllerRole-demo"
	nodeName       = "ip-10-0-1-23.us-west-2.compute.internal"
)

func mapRolesFor(role, username string, groups ...string) string {
	s := "- rolearn: " + role + "\n  username: " + username + "\n  groups:\n"
	for _, g := range groups {
		s += "  - " + g + "\n"
	}
	return s
}

func TestAuthorize(t *testing.T) {
	goodMapping := mapRolesFor(nodeRole, NodeUsernameTemplate, BootstrappersGroup, NodesGroup)
	tests := []struct {
		name        string
		req         AuthRequest
		wantAllowed bool
		wantReason  string
		wantSource  string
		wantWarn    bool
	}{
		{
			name:        "aws-auth maps the node role",
			req:         AuthRequest{RoleARN: nodeRole, MapRoles: goodMapping, ConfigMapFound: true},
			wantAllowed: true, wantSource: "aws-auth",
		},
		{
			name:       "S1: only the controller role is mapped",
			req:        AuthRequest{RoleARN: nodeRole, MapRoles: mapRolesFor(controllerRole, NodeUsernameTemplate, BootstrappersGroup, NodesGroup), ConfigMapFound: true},
			wantReason: ReasonUnauthorized,
		},
		{
			name:       "no aws-auth and no access entry",
			req:        AuthRequest{RoleARN: nodeRole},
			wantReason: ReasonUnauthorized,
		},
		{
			name:        "EC2_LINUX access entry",
			req:         AuthRequest{RoleARN: nodeRole, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeEC2Linux}}},
			wantAllowed: true, wantSource: "access entry",
		},
		{
			name:        "EC2_WINDOWS access entry",
			req:         AuthRequest{RoleARN: nodeRole, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeEC2Windows}}},
			wantAllowed: true, wantSource: "access entry",
		},
		{
			name:       "HYBRID_LINUX access entry names the node after the session: forbidden",
			req:        AuthRequest{RoleARN: nodeRole, SessionName: "i-0123", AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeHybridLinux}}},
			wantReason: ReasonForbidden, wantSource: "access entry",
		},
		{
			name:       "FARGATE_LINUX access entry: forbidden",
			req:        AuthRequest{RoleARN: nodeRole, SessionName: "i-0123", AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeFargateLinux}}},
			wantReason: ReasonForbidden, wantSource: "access entry",
		},
		{
			name:       "STANDARD access entry with the node username and no node group: forbidden",
			req:        AuthRequest{RoleARN: nodeRole, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeStandard, Username: "node-admin", KubernetesGroups: []string{"ops"}}}},
			wantReason: ReasonForbidden, wantSource: "access entry",
		},
		{
			name:        "access entry written with the role's path matches",
			req:         AuthRequest{RoleARN: "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", AuthenticationMode: AuthenticationModeAPI, AccessEntries: []AccessEntry{{PrincipalARN: "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", Type: AccessEntryTypeEC2Linux}}},
			wantAllowed: true, wantSource: "access entry",
		},
		{
			name:        "aws-auth used in API_AND_CONFIG_MAP when no entry matches",
			req:         AuthRequest{RoleARN: nodeRole, AuthenticationMode: AuthenticationModeAPIAndConfigMap, MapRoles: goodMapping, ConfigMapFound: true, AccessEntries: []AccessEntry{{PrincipalARN: controllerRole, Type: AccessEntryTypeEC2Linux}}},
			wantAllowed: true, wantSource: "aws-auth",
		},
		{
			name:       "aws-auth ignored in API mode even when no entry matches",
			req:        AuthRequest{RoleARN: nodeRole, AuthenticationMode: AuthenticationModeAPI, MapRoles: goodMapping, ConfigMapFound: true, AccessEntries: []AccessEntry{{PrincipalARN: controllerRole, Type: AccessEntryTypeEC2Linux}}},
			wantReason: ReasonUnauthorized,
		},
		{
			name:       "access entries ignored in CONFIG_MAP mode",
			req:        AuthRequest{RoleARN: nodeRole, AuthenticationMode: AuthenticationModeConfigMap, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeEC2Linux}}},
			wantReason: ReasonUnauthorized,
		},
		{
			name:       "aws-auth ignored in API mode",
			req:        AuthRequest{RoleARN: nodeRole, AuthenticationMode: AuthenticationModeAPI, MapRoles: goodMapping, ConfigMapFound: true},
			wantReason: ReasonUnauthorized,
		},
		{
			name:       "STANDARD access entry without groups is forbidden",
			req:        AuthRequest{RoleARN: nodeRole, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeStandard}}},
			wantReason: ReasonForbidden, wantSource: "access entry",
		},
		{
			name:       "access entry wins over aws-auth",
			req:        AuthRequest{RoleARN: nodeRole, MapRoles: goodMapping, ConfigMapFound: true, AccessEntries: []AccessEntry{{PrincipalARN: nodeRole, Type: AccessEntryTypeStandard}}},
			wantReason: ReasonForbidden, wantSource: "access entry",
		},
		{
			name:       "rolearn written with its path never matches",
			req:        AuthRequest{RoleARN: "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", MapRoles: mapRolesFor("arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", NodeUsernameTemplate, NodesGroup), ConfigMapFound: true},
			wantReason: ReasonUnauthorized,
		},
		{
			name:        "role with a path mapped without it",
			req:         AuthRequest{RoleARN: "arn:aws:iam::111122223333:role/nodes/KarpenterNodeRole-demo", MapRoles: goodMapping, ConfigMapFound: true},
			wantAllowed: true, wantSource: "aws-auth",
		},
		{
			name:       "missing system:nodes group",
			req:        AuthRequest{RoleARN: nodeRole, MapRoles: mapRolesFor(nodeRole, NodeUsernameTemplate, BootstrappersGroup), ConfigMapFound: true},
			wantReason: ReasonForbidden, wantSource: "aws-auth",
		},
		{
			name:       "username of the session name is refused by NodeRestriction",
			req:        AuthRequest{RoleARN: nodeRole, SessionName: "i-0123", MapRoles: mapRolesFor(nodeRole, "system:node:{{SessionName}}", NodesGroup), ConfigMapFound: true},
			wantReason: ReasonForbidden, wantSource: "aws-auth",
		},
		{
			name:        "missing system:bootstrappers only warns",
			req:         AuthRequest{RoleARN: nodeRole, MapRoles: mapRolesFor(nodeRole, NodeUsernameTemplate, NodesGroup), ConfigMapFound: true},
			wantAllowed: true, wantSource: "aws-auth", wantWarn: true,
		},
		{
			name:       "mapRoles not YAML",
			req:        AuthRequest{RoleARN: nodeRole, MapRoles: "- rolearn: [", ConfigMapFound: true},
			wantReason: ReasonUnauthorized, wantWarn: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.NodeName = nodeName
			got := Authorize(tt.req)
			if got.Allowed != tt.wantAllowed || got.Reason != tt.wantReason || got.Source != tt.wantSource || (len(got.Warnings) > 0) != tt.wantWarn {
				t.Errorf("Authorize() = %+v, want allowed %v reason %q source %q warnings %v", got, tt.wantAllowed, tt.wantReason, tt.wantSource, tt.wantWarn)
			}
			if tt.wantReason == ReasonUnauthorized && got.Message != "Unauthorized" {
				t.Errorf("Message = %q, want Unauthorized", got.Message)
			}
		})
	}
}
