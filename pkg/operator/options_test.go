package operator_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/joinerhq/joiner/pkg/operator"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		check   func(t *testing.T, o *operator.Options)
	}{
		{
			name: "defaults",
			args: []string{"--cluster-name=c"},
			check: func(t *testing.T, o *operator.Options) {
				if o.BatchIdleDuration != time.Second || o.BatchMaxDuration != 10*time.Second || o.LogLevel != "info" || !o.LeaderElection ||
					o.KubeClientQPS != 200 || o.KubeClientBurst != 300 {
					t.Errorf("defaults = %+v", o)
				}
			},
		},
		{
			name: "environment",
			env:  map[string]string{"CLUSTER_NAME": "env", "BATCH_IDLE_DURATION": "2s", "BATCH_MAX_DURATION": "20s", "LOG_LEVEL": "debug", "INTERRUPTION_QUEUE": "q"},
			check: func(t *testing.T, o *operator.Options) {
				if o.ClusterName != "env" || o.BatchIdleDuration != 2*time.Second || o.BatchMaxDuration != 20*time.Second || o.LogLevel != "debug" || o.InterruptionQueue != "q" {
					t.Errorf("from environment = %+v", o)
				}
			},
		},
		{
			name: "flags win over environment",
			env:  map[string]string{"CLUSTER_NAME": "env"},
			args: []string{"--cluster-name=flag"},
			check: func(t *testing.T, o *operator.Options) {
				if o.ClusterName != "flag" {
					t.Errorf("ClusterName = %q, want flag", o.ClusterName)
				}
			},
		},
		{name: "cluster name required", wantErr: "--cluster-name"},
		{name: "bad env duration", env: map[string]string{"CLUSTER_NAME": "c", "BATCH_IDLE_DURATION": "soon"}, wantErr: `BATCH_IDLE_DURATION="soon"`},
		{name: "max below idle", args: []string{"--cluster-name=c", "--batch-idle-duration=5s", "--batch-max-duration=1s"}, wantErr: "at least --batch-idle-duration"},
		{name: "bad level", args: []string{"--cluster-name=c", "--log-level=loud"}, wantErr: "not a level"},
		{name: "bad env qps", env: map[string]string{"CLUSTER_NAME": "c", "KUBE_CLIENT_QPS": "fast"}, wantErr: `KUBE_CLIENT_QPS="fast" is not a whole number`},
		{name: "burst below qps", args: []string{"--cluster-name=c", "--kube-client-qps=50", "--kube-client-burst=10"}, wantErr: "at least --kube-client-qps"},
		{name: "renew not below lease", args: []string{"--cluster-name=c", "--leader-election-lease-duration=10s", "--leader-election-renew-deadline=10s"}, wantErr: "--leader-election-lease-duration 10s must be longer than --leader-election-renew-deadline 10s"},
		{name: "retry not below renew", args: []string{"--cluster-name=c", "--leader-election-retry-period=10s"}, wantErr: "--leader-election-renew-deadline 10s must be longer than --leader-election-retry-period 10s"},
		{name: "negative shutdown", env: map[string]string{"CLUSTER_NAME": "c", "GRACEFUL_SHUTDOWN_TIMEOUT": "-1s"}, wantErr: "--graceful-shutdown-timeout -1s must be positive"},
		{name: "profiling without metrics", args: []string{"--cluster-name=c", "--enable-profiling", "--metrics-bind-address=0"}, wantErr: "--enable-profiling serves the profiles on the metrics address"},
		{
			name: "profiling from environment",
			env:  map[string]string{"CLUSTER_NAME": "c", "ENABLE_PROFILING": "true"},
			check: func(t *testing.T, o *operator.Options) {
				if !o.EnableProfiling {
					t.Errorf("EnableProfiling = false with ENABLE_PROFILING=true")
				}
			},
		},
		{name: "zero qps", args: []string{"--cluster-name=c", "--kube-client-qps=0"}, wantErr: "--kube-client-qps 0 must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parseOptions(t, tt.env, tt.args)
			err := o.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			tt.check(t, o)
		})
	}
}

// TestGCPercent: the garbage collector's target is DefaultGCPercent, or GOGC as the Go runtime
// reads it ("off" is -1), or the flag.
func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    int
		wantErr string
	}{
		{name: "default", want: operator.DefaultGCPercent},
		{name: "GOGC", env: map[string]string{"GOGC": "200"}, want: 200},
		{name: "GOGC off", env: map[string]string{"GOGC": "off"}, want: -1},
		{name: "flag over GOGC", env: map[string]string{"GOGC": "200"}, args: []string{"--gc-percent=25"}, want: 25},
		{name: "below -1", args: []string{"--gc-percent=-2"}, wantErr: "--gc-percent -2 must be positive"},
		{name: "bad GOGC", env: map[string]string{"GOGC": "lots"}, wantErr: `GOGC="lots" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"CLUSTER_NAME": "c"}
			maps.Copy(env, tc.env)
			o := parseOptions(t, env, tc.args)
			err := o.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if o.GCPercent != tc.want {
				t.Errorf("GCPercent = %d, want %d", o.GCPercent, tc.want)
			}
		})
	}
}

// parseOptions parses args into Options with exactly the variables of env set among those the
// options read.
func parseOptions(t *testing.T, env map[string]string, args []string) *operator.Options {
	t.Helper()
	for _, k := range []string{"CLUSTER_NAME", "BATCH_IDLE_DURATION", "BATCH_MAX_DURATION", "LOG_LEVEL", "INTERRUPTION_QUEUE", "KUBE_CLIENT_QPS", "GRACEFUL_SHUTDOWN_TIMEOUT", "ENABLE_PROFILING", "METRICS_BIND_ADDRESS", "GOGC"} {
		t.Setenv(k, env[k])
		if _, ok := env[k]; !ok {
			unsetenv(t, k)
		}
	}
	var o operator.Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &o
}
