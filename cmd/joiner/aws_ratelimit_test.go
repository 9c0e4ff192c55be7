package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/joinerhq/joiner/pkg/aws/sdk"
)

func TestAWSRateLimitScale(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		args    []string
		want    float64
		wantErr string
	}{
		{name: "default", want: sdk.DefaultRateLimitScale},
		{name: "environment", env: "0.5", want: 0.5},
		{name: "off", env: "0.5", args: []string{"--aws-rate-limit-scale=0"}, want: 0},
		{name: "AWS's own rates", args: []string{"--aws-rate-limit-scale=1"}, want: 1},
		{name: "not a number", env: "fast", wantErr: `AWS_RATE_LIMIT_SCALE="fast" is not a number`},
		{name: "negative", args: []string{"--aws-rate-limit-scale=-1"}, wantErr: "--aws-rate-limit-scale -1 is not a share"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_RATE_LIMIT_SCALE", tt.env)
			o := awsOptions{}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			if err := fs.Parse(append(tt.args, "--aws-region=us-west-2")); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("validate: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.RateLimitScale != tt.want {
				t.Errorf("scale %v, want %v", o.RateLimitScale, tt.want)
			}
		})
	}
}

func TestVMMemoryOverheadPercent(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		args    []string
		want    float64
		wantErr string
	}{
		{name: "default, Karpenter's", want: 0.075},
		{name: "environment, as Karpenter's chart sets it", env: "0.1", want: 0.1},
		{name: "flag over environment", env: "0.1", args: []string{"--vm-memory-overhead-percent=0.05"}, want: 0.05},
		{name: "not a number", env: "7.5%", wantErr: `VM_MEMORY_OVERHEAD_PERCENT="7.5%" is not a number`},
		{name: "a percentage, not a share", args: []string{"--vm-memory-overhead-percent=7.5"}, wantErr: "--vm-memory-overhead-percent 7.5 is not a share of memory"},
		{name: "zero", args: []string{"--vm-memory-overhead-percent=0"}, wantErr: "above 0 and below 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VM_MEMORY_OVERHEAD_PERCENT", tt.env)
			o := awsOptions{}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.addFlags(fs)
			if err := fs.Parse(append(tt.args, "--aws-region=us-west-2")); err != nil {
				t.Fatal(err)
			}
			err := o.validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("validate: %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.VMMemoryOverheadPercent != tt.want {
				t.Errorf("overhead %v, want %v", o.VMMemoryOverheadPercent, tt.want)
			}
		})
	}
}
