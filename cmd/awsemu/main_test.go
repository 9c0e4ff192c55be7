package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joinerhq/joiner/awsemu/emutest"
	"github.com/joinerhq/joiner/awsemu/state"
)

func TestRunLogsOneReadyLineAndServes(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0"}, pw)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "awsemu listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("ready line %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	client := sts.NewFromConfig(aws.Config{Region: "us-west-2", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDJOINERCONTROLLER", "secret", "")})
	who, err := client.GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if *who.Account != "111122223333" {
		t.Errorf("account %s", *who.Account)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after its context ended")
	}
}

// testCA is a PEM bundle as a kubeconfig carries it; the emulator passes it on without parsing.
const testCA = "-----BEGIN CERTIFICATE-----\nTUlJQ0FURVNU\n-----END CERTIFICATE-----\n"

func TestParseKubeconfigGivesTheClusterItsEndpointAndCA(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte(testCA), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := func(cluster string) string {
		return `apiVersion: v1
kind: Config
current-context: stack
contexts:
- name: stack
  context: {cluster: stack, user: admin}
- name: other
  context: {cluster: other, user: admin}
clusters:
- name: other
  cluster: {server: "https://other:6443", certificate-authority-data: T1RIRVI=}
- name: stack
  cluster: ` + cluster + `
users:
- name: admin
  user: {token: secret}
`
	}
	for _, tt := range []struct {
		name, cluster, wantErr string
	}{
		{name: "CA data", cluster: `{server: "https://127.0.0.1:6443", certificate-authority-data: ` + base64.StdEncoding.EncodeToString([]byte(testCA)) + `}`},
		{name: "CA file relative to the kubeconfig", cluster: `{server: "https://127.0.0.1:6443", certificate-authority: ca.crt}`},
		{name: "no CA", cluster: `{server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}`, wantErr: "no certificate authority"},
		{name: "missing CA file", cluster: `{server: "https://127.0.0.1:6443", certificate-authority: gone.crt}`, wantErr: "gone.crt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(path, []byte(kubeconfig(tt.cluster)), 0o600); err != nil {
				t.Fatal(err)
			}
			o, err := parse([]string{"--kubeconfig", path}, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.seed.ClusterEndpoint != "https://127.0.0.1:6443" || string(o.seed.ClusterCA) != testCA || o.kubeconfig == nil {
				t.Errorf("endpoint %q, CA %q, kubeconfig loaded %t", o.seed.ClusterEndpoint, o.seed.ClusterCA, o.kubeconfig != nil)
			}
		})
	}
}

func TestParseTimings(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		want     state.Timings
		wantSync time.Duration
		wantErr  bool
	}{
		{name: "defaults", want: state.DefaultTimings(), wantSync: time.Second},
		{name: "fast stack", args: []string{"--pending-for", "1s", "--boot-delay", "3s", "--shutting-down-for", "2s", "--kubelet-sync-interval", "200ms"},
			want: state.Timings{PendingFor: time.Second, BootDelay: 3 * time.Second, ShuttingDownFor: 2 * time.Second}, wantSync: 200 * time.Millisecond},
		{name: "zero", args: []string{"--boot-delay", "0s"}, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %t", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if o.seed.Timings != tt.want || o.kubeletSync != tt.wantSync {
				t.Errorf("timings %+v every %s, want %+v every %s", o.seed.Timings, o.kubeletSync, tt.want, tt.wantSync)
			}
		})
	}
}

// TestSeededClusterReportsTheKubeconfigCluster checks what the Joiner controller reads: EKS
// DescribeCluster answers the seeded endpoint and the CA base64 encoded.
func TestSeededClusterReportsTheKubeconfigCluster(t *testing.T) {
	seed := state.DefaultSeed()
	seed.ClusterEndpoint, seed.ClusterCA = "https://127.0.0.1:6443", []byte(testCA)
	client := eks.NewFromConfig(emutest.Start(t, emutest.WithSeed(seed)).Config)
	out, err := client.DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String(seed.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.Cluster.Endpoint); got != seed.ClusterEndpoint {
		t.Errorf("endpoint %q", got)
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(out.Cluster.CertificateAuthority.Data))
	if err != nil || string(ca) != testCA {
		t.Errorf("certificate authority %q (%v)", ca, err)
	}
}

// TestWorldSeedsTheAccount: --world serves the account it describes, as the controller's key
// sees it.
func TestWorldSeedsTheAccount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prod.world.yaml")
	doc := "cluster: {name: prod, accountId: \"210987654321\", region: eu-west-1}\n" +
		"controllerRole: arn:aws:iam::210987654321:role/platform/KarpenterControllerRole-prod\ncontrollerAccessKeyId: AKIDPRODCONTROLLER\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := serve(t, "--world", path)
	defer stop()
	cfg := aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDPRODCONTROLLER", "secret", "")}
	who, err := sts.NewFromConfig(cfg).GetCallerIdentity(t.Context(), &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(who.Arn); got != "arn:aws:sts::210987654321:assumed-role/KarpenterControllerRole-prod/AKIDPRODCONTROLLER" {
		t.Errorf("caller %s", got)
	}
	if _, err := eks.NewFromConfig(cfg).DescribeCluster(t.Context(), &eks.DescribeClusterInput{Name: aws.String("prod")}); err != nil {
		t.Errorf("DescribeCluster prod in eu-west-1: %v", err)
	}
}

// TestMalformedWorldsStartNothing: each refused world is an error naming the field, returned
// before anything listens.
func TestMalformedWorldsStartNothing(t *testing.T) {
	const vpc = "cluster: {name: prod, vpcCidr: 10.0.0.0/16}\n"
	for _, tt := range []struct{ world, path string }{
		{"cluster: {name: prod}\nclusterz: {}\n", "clusterz"},
		{"cluster: {name: prod, Region: us-west-2}\n", "cluster.Region"},
		{"cluster: {region: us-west-2}\n", "cluster.name"},
		{"cluster: {name: prod, kubernetesVersion: 1.30}\n", "cluster.kubernetesVersion"},
		{"cluster: {name: prod, region: mars-1}\n", "cluster.region"},
		{"cluster: {name: prod, accountId: \"12\"}\n", "cluster.accountId"},
		{"cluster: {name: prod, authenticationMode: IAM}\n", "cluster.authenticationMode"},
		{"cluster: {name: prod, serviceIpv4Cidr: 10.100.0.0/33}\n", "cluster.serviceIpv4Cidr"},
		{vpc + "subnets: [{subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-west-2a, cidrBlock: 10.9.0.0/24}]\n", "subnets[0].cidrBlock"},
		{vpc + "subnets: [{subnetId: subnet-0a1b2c3d4e5f60001, availabilityZone: us-east-1a, cidrBlock: 10.0.0.0/24}]\n", "subnets[0].availabilityZone"},
		{vpc + "subnets: [{subnetId: subnet-1, availabilityZone: us-west-2a, cidrBlock: 10.0.0.0/24}]\n", "subnets[0].subnetId"},
		{"cluster: {name: prod}\nsecurityGroups: [{groupId: sg-1}]\n", "securityGroups[0].groupId"},
		{"cluster: {name: prod}\naccessEntries: [{principalArn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod, type: NODE}]\n", "accessEntries[0].type"},
		{"cluster: {name: prod}\naccessEntries: [{principalArn: arn:aws:iam::999999999999:role/NodeRole, type: EC2_LINUX}]\n", "accessEntries[0].principalArn"},
		{"cluster: {name: prod}\naccessEntries: [{principalArn: arn:aws:iam::111122223333:role/JoinerControllerRole, clusterName: other}]\n", "accessEntries[0].clusterName"},
		{"cluster: {name: prod}\ninstanceProfiles: [{instanceProfileName: p, roles: [arn:aws:iam::111122223333:role/Gone]}]\n", "instanceProfiles[0].roles[0]"},
		{"cluster: {name: prod}\nnodeRoles: [{name: node-role, path: nodes}]\n", "nodeRoles[0].path"},
		{"cluster: {name: prod}\ncontrollerRole: arn:aws:iam::999999999999:role/C\n", "controllerRole"},
		{"cluster: {name: prod}\ncontrollerPolicy: {Version: \"2012-10-17\", Statement: [{Effect: Maybe, Action: \"*\", Resource: \"*\"}]}\n", "controllerPolicy.Statement[0].Effect"},
		{"cluster: {name: prod}\nimages: [{imageId: ami-0a1b2c3d4e5f67890, name: custom, architecture: amd64}]\n", "images[0].architecture"},
		{"cluster: {name: prod}\nimages: [{imageId: ami-0a1b2c3d4e5f67890, name: custom, architecture: arm64, bootstrap: eksctl}]\n", "images[0].bootstrap"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.world.yaml")
			if err := os.WriteFile(path, []byte(tt.world), 0o600); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			// A world that is accepted serves until the context ends: the timeout turns that
			// into a failure instead of a hang.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := run(ctx, []string{"--listen", "127.0.0.1:0", "--world", path}, &out)
			if err == nil || !strings.Contains(err.Error(), tt.path+":") {
				t.Fatalf("run error = %v, want one naming %s", err, tt.path)
			}
			if strings.Contains(out.String(), "listening") {
				t.Errorf("the emulator listened: %s", out.String())
			}
		})
	}
	path := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(path, []byte("cluster: {name: prod}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parse([]string{"--world", path, "--cluster-name", "x"}, io.Discard); err == nil {
		t.Error("--world with --cluster-name accepted")
	}
}

// serve runs the emulator with args on a free port until stop is called, and returns its URL.
func serve(t *testing.T, args ...string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0"}, args...), pw)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("no ready line: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "awsemu listening on ")
	if !ok {
		t.Fatalf("ready line %q", line)
	}
	return url, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

// TestParseRateLimits: --rate-limits is AWS's limits by default, off, or a factor; anything else
// is refused naming the flag.
func TestParseRateLimits(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    string
		wantErr string
	}{
		{want: "aws"},
		{args: []string{"--rate-limits", "off"}, want: "off"},
		{args: []string{"--rate-limits", "AWS"}, want: "aws"},
		{args: []string{"--rate-limits", "0.5"}, want: "0.5"},
		{args: []string{"--rate-limits", "10"}, want: "10"},
		{args: []string{"--rate-limits", "0"}, wantErr: "--rate-limits: rate limits \"0\": give off, aws, or a positive factor"},
		{args: []string{"--rate-limits", "on"}, wantErr: "--rate-limits"},
	} {
		o, err := parse(tt.args, io.Discard)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want it to say %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || o.rateLimits.String() != tt.want {
			t.Errorf("%v: rate limits %s (%v), want %s", tt.args, o.rateLimits, err, tt.want)
		}
	}
}
