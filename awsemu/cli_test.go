package awsemu_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/authz"
)

// cli runs the AWS CLI against the emulator as the administrator and decodes its JSON output
// into out (nil: none expected). It skips the test where the CLI is not installed.
func (e *env) cli(t *testing.T, out any, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the AWS CLI is not installed")
	}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"--endpoint-url", e.url, "--output", "json"}, args...)...)
	home := t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AWS_CONFIG_FILE=" + home + "/config",
		"AWS_SHARED_CREDENTIALS_FILE=" + home + "/credentials", "AWS_ACCESS_KEY_ID=" + authz.AdminAccessKey,
		"AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=" + e.region, "AWS_MAX_ATTEMPTS=1"}
	raw, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errorsAs(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("aws %s printed %s: %v", strings.Join(args, " "), raw, err)
		}
	}
}

// TestAWSCLI fixes an account the way an operator would from a terminal: the AWS CLI (botocore's
// own serializers, not the Go SDK's) replaces the controller's policy and maps a node role.
func TestAWSCLI(t *testing.T) {
	e := newEnv(t)
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeSubnets","Resource":"*"}]}`
	e.cli(t, nil, "iam", "put-role-policy", "--role-name", controllerRoleName, "--policy-name", "JoinerControllerPolicy", "--policy-document", doc)
	var got struct {
		PolicyDocument struct {
			Statement []struct{ Action string }
		}
	}
	e.cli(t, &got, "iam", "get-role-policy", "--role-name", controllerRoleName, "--policy-name", "JoinerControllerPolicy")
	if len(got.PolicyDocument.Statement) != 1 || got.PolicyDocument.Statement[0].Action != "ec2:DescribeSubnets" {
		t.Errorf("policy read back by the CLI: %+v", got)
	}
	var role struct{ Role struct{ Arn string } }
	e.cli(t, &role, "iam", "create-role", "--role-name", "CliNodes", "--path", "/nodes/", "--assume-role-policy-document",
		`{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)
	var entry struct {
		AccessEntry struct {
			Type             string
			Username         string
			KubernetesGroups []string
		}
	}
	e.cli(t, &entry, "eks", "create-access-entry", "--cluster-name", "demo", "--principal-arn", role.Role.Arn, "--type", "EC2_LINUX")
	if entry.AccessEntry.Type != "EC2_LINUX" || entry.AccessEntry.Username != "system:node:{{EC2PrivateDNSName}}" {
		t.Errorf("entry read back by the CLI: %+v", entry.AccessEntry)
	}
}
