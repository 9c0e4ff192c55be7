package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/pkg/doctor"
)

const doctorScenarios = "../../test/scenarios/"

func runDoctor(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetArgs(append([]string{"doctor"}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

// TestDoctorOffline: the report and whether the command fails (exit 1) for each scenario.
func TestDoctorOffline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		failing bool
		want    []string
	}{
		{"S1 fails", []string{"-f", doctorScenarios + "s1-unmapped-node-role.yaml"}, true, []string{"ERROR    ConfigMap/kube-system/aws-auth  AWSAuthMapsAnotherRole", "1 errors"}},
		{"S2 fails", []string{"-f", doctorScenarios + "s2-custom-ami-taint-args.yaml"}, true, []string{"BootstrapOptionIgnored"}},
		{"S3 advises", []string{"--filename", doctorScenarios + "s3-al2023-userdata-taint-override.yaml"}, false, []string{"ADVICE   NodePool/default  AgentTaintNotInStartupTaints", "0 errors, 0 warnings, 2 advice"}},
		{"S5 passes", []string{"-f", doctorScenarios + "s5-arm64-nodepool.yaml"}, false, []string{"0 errors, 0 warnings, 0 advice"}},
		{"files add up; --cluster-name in the fix", []string{"-f", doctorScenarios + "s5-arm64-nodepool.yaml", "-f", "../../pkg/doctor/testdata/s1-without-aws-auth.yaml", "-f", "../../pkg/doctor/testdata/s1-aws-auth-fixed.yaml", "--cluster-name", "demo"}, false,
			[]string{"offline check of 2 EC2NodeClasses, 2 NodePools, 6 pods: 0 errors"}},
		{"--account and --authentication-mode", []string{"-f", "../../pkg/doctor/testdata/s1-without-aws-auth.yaml", "--account", "111122223333", "--authentication-mode", "API", "--cluster-name", "demo"}, false,
			[]string{"WARNING  EC2NodeClass/default  NodeRoleMappingUnverified", "aws eks create-access-entry --cluster-name demo --principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-demo --type EC2_LINUX", "account 111122223333 (from --account); authentication mode API"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runDoctor(t, tc.args...)
			var findings errDoctorFindings
			if tc.failing != errors.As(err, &findings) || (!tc.failing && err != nil) {
				t.Fatalf("error %v, want failing=%v", err, tc.failing)
			}
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}

// TestDoctorStdin: -f - reads standard input, and its errors name it.
func TestDoctorStdin(t *testing.T) {
	b, err := os.ReadFile(doctorScenarios + "s2-custom-ami-taint-args.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
	}{
		{string(b), "BootstrapOptionIgnored"},
		{"kind: [", "reading standard input"},
	} {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetArgs([]string{"doctor", "-f", "-", "-f", doctorScenarios + "s5-arm64-nodepool.yaml"})
		cmd.SetIn(strings.NewReader(tc.in))
		cmd.SetOut(&out)
		err := cmd.Execute()
		if err == nil || !strings.Contains(out.String()+err.Error(), tc.want) {
			t.Errorf("input %.20q: error %v, output lacks %q:\n%s", tc.in, err, tc.want, out.String())
		}
	}
}

// TestDoctorJSON: -o json is the Report, fixes unescaped.
func TestDoctorJSON(t *testing.T) {
	out, err := runDoctor(t, "-f", doctorScenarios+"s1-unmapped-node-role.yaml", "-o", "json")
	if !errors.As(err, new(errDoctorFindings)) {
		t.Fatalf("error %v, want the findings error", err)
	}
	var r doctor.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Mode != "offline" || r.Errors != 1 || len(r.Findings) != 1 || r.Findings[0].Reason != "AWSAuthMapsAnotherRole" || r.AccountID != "111122223333" {
		t.Errorf("report %+v", r)
	}
	if !strings.Contains(out, `"fix": "run aws eks create-access-entry --cluster-name <cluster>`) {
		t.Errorf("fix escaped or missing:\n%s", out)
	}
	out, err = runDoctor(t, "-f", doctorScenarios+"s5-arm64-nodepool.yaml", "-o", "json")
	if err != nil || !strings.Contains(out, `"findings": []`) {
		t.Errorf("S5: %v\n%s", err, out)
	}
}

// TestDoctorRefusesWhatCannotRun: bad flags and files name the problem and the fix.
func TestDoctorRefusesWhatCannotRun(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: NodePool\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLUSTER_NAME", "")
	kubeconfig := noRegionAnywhere(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-f", filepath.Join(dir, "missing.yaml")}, []string{"missing.yaml", "pass the path of a YAML or JSON manifest"}},
		{[]string{"-f", bad}, []string{"bad.yaml", "apiVersion or kind", "correct the YAML"}},
		{[]string{"-f", doctorScenarios + "s5-arm64-nodepool.yaml", "-o", "yaml"}, []string{"-o yaml is not an output format"}},
		{[]string{"-f", doctorScenarios + "s5-arm64-nodepool.yaml", "--account", "12"}, []string{"--account 12", "12 digits"}},
		{[]string{"-f", doctorScenarios + "s5-arm64-nodepool.yaml", "--authentication-mode", "IAM"}, []string{"--authentication-mode IAM", "API, API_AND_CONFIG_MAP or CONFIG_MAP"}},
		{[]string{}, []string{"--cluster-name", "-f FILE"}},
		{[]string{"--cluster-name", "demo", "--aws-region", "", "--kubeconfig", kubeconfig}, []string{"--aws-region"}},
		{[]string{"extra"}, []string{"unknown command"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := runDoctor(t, tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
}

// TestDoctorExitCodes runs the joiner binary's main (this test binary, re-executed): exit 1 when
// a finding is an Error, 0 otherwise, and 1 on bad input.
func TestDoctorExitCodes(t *testing.T) {
	if args := os.Getenv("JOINER_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"joiner"}, strings.Split(args, " ")...)
		main()
		return
	}
	for _, tc := range []struct {
		args string
		code int
	}{
		{"doctor -f " + doctorScenarios + "s1-unmapped-node-role.yaml", 1},
		{"doctor -f " + doctorScenarios + "s2-custom-ami-taint-args.yaml -o json", 1},
		{"doctor -f " + doctorScenarios + "s3-al2023-userdata-taint-override.yaml", 0},
		{"doctor -f " + doctorScenarios + "s5-arm64-nodepool.yaml", 0},
		{"doctor -f missing.yaml", 1},
	} {
		t.Run(tc.args, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestDoctorExitCodes$")
			cmd.Env = append(os.Environ(), "JOINER_TEST_MAIN_ARGS="+tc.args)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.code == 1 && !strings.Contains(stderr.String(), "Error: ") {
				t.Errorf("stderr lacks the error:\n%s", stderr.String())
			}
		})
	}
}
