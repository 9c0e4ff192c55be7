package main

import (
	"strings"
	"testing"
)

func TestControllerRefusesWhatCannotRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "aws provider not built yet", args: []string{"controller", "--cluster-name=c"}, wantErr: "use --cloud-provider fake"},
		{name: "unknown provider", args: []string{"controller", "--cluster-name=c", "--cloud-provider=gcp"}, wantErr: `"gcp" is not a provider`},
		{name: "cluster name required", args: []string{"controller", "--cloud-provider=fake", "--cluster-name="}, wantErr: "--cluster-name (CLUSTER_NAME) is required"},
		{name: "bad log level", args: []string{"controller", "--cloud-provider=fake", "--cluster-name=c", "--log-level=loud"}, wantErr: "not a level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runJoiner(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestControllerHelpSaysTheFakeIsAFake(t *testing.T) {
	out, _, err := runJoiner(t, "controller", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--cloud-provider", "launches nothing real", "[BATCH_IDLE_DURATION] (default 1s)", "[BATCH_MAX_DURATION] (default 10s)", "--leader-elect"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}
