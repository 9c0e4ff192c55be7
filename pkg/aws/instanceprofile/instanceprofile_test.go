package instanceprofile

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

func startEmulator(t *testing.T) *iam.Client {
	t.Helper()
	e := emutest.Start(t)
	e.Update(t, func(w *state.World) error {
		w.PutRole("OtherNodeRole", nil)
		w.PutInstanceProfile("empty")
		return nil
	})
	return e.Clients.IAM
}

func roleClass(role string) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{Role: role, Tags: map[string]string{"team": "infra"}}}
	nc.Name = "default"
	return nc
}

func profileClass(name string) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{InstanceProfile: &name}}
	nc.Name = "byo"
	return nc
}

func roles(t *testing.T, api *iam.Client, name string) ([]string, map[string]string) {
	t.Helper()
	out, err := api.GetInstanceProfile(t.Context(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range out.InstanceProfile.Roles {
		names = append(names, aws.ToString(r.RoleName))
	}
	tags := map[string]string{}
	for _, tag := range out.InstanceProfile.Tags {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return names, tags
}

func TestEnsureRole(t *testing.T) {
	api := startEmulator(t)
	p := NewProvider(api, "demo", "us-west-2")
	name, err := p.Ensure(t.Context(), roleClass("KarpenterNodeRole-demo"))
	if err != nil {
		t.Fatal(err)
	}
	got, tags := roles(t, api, name)
	if diff := cmp.Diff([]string{"KarpenterNodeRole-demo"}, got); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	for k, v := range map[string]string{"kubernetes.io/cluster/demo": "owned", awsv1.TagKeyNodeClass: "default", "team": "infra"} {
		if tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, tags[k], v)
		}
	}
	// A changed role replaces the old one in the same profile.
	again, err := p.Ensure(t.Context(), roleClass("OtherNodeRole"))
	if err != nil || again != name {
		t.Fatalf("Ensure with another role: %q, %v", again, err)
	}
	if got, _ := roles(t, api, name); !cmp.Equal([]string{"OtherNodeRole"}, got) {
		t.Errorf("roles after the change %v, want [OtherNodeRole]", got)
	}
	if err := p.Delete(t.Context(), roleClass("OtherNodeRole")); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(t.Context(), roleClass("OtherNodeRole")); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

func TestEnsureInstanceProfile(t *testing.T) {
	tests := []struct {
		profile string
		wantErr string
	}{
		{profile: "KarpenterNodeRole-demo"},
		{profile: "empty", wantErr: "holds no role"},
		{profile: "missing", wantErr: "NoSuchEntity"},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			api := startEmulator(t)
			p := NewProvider(api, "demo", "us-west-2")
			name, err := p.Ensure(t.Context(), profileClass(tt.profile))
			switch {
			case tt.wantErr == "" && (err != nil || name != tt.profile):
				t.Errorf("Ensure: %q, %v", name, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Ensure: %v, want an error containing %q", err, tt.wantErr)
			}
			// Joiner never deletes an operator's profile.
			if err := p.Delete(t.Context(), profileClass(tt.profile)); err != nil {
				t.Errorf("Delete: %v", err)
			}
		})
	}
}

func TestName(t *testing.T) {
	a := Name("demo", "us-west-2", roleClass("r"))
	other := roleClass("r")
	other.Name = "other"
	for _, n := range []string{Name("demo", "eu-west-1", roleClass("r")), Name("prod", "us-west-2", roleClass("r")), Name("demo", "us-west-2", other)} {
		if n == a {
			t.Errorf("%s names two profiles", n)
		}
	}
	if Name("demo", "us-west-2", roleClass("changed")) != a {
		t.Error("the name depends on the role")
	}
}

// A spec.role that names no role is reported naming the field and the fix, not only IAM's
// NoSuchEntity.
func TestEnsureMissingRole(t *testing.T) {
	api := startEmulator(t)
	p := NewProvider(api, "demo", "us-west-2")
	_, err := p.Ensure(t.Context(), roleClass("NoSuchRole"))
	if err == nil {
		t.Fatal("Ensure with a role that does not exist succeeded")
	}
	for _, want := range []string{"role NoSuchRole of spec.role does not exist", "set spec.role", "NoSuchEntity"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Ensure: %v, want it to contain %q", err, want)
		}
	}
}
