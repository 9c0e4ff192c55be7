package userdata

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// other is a KubeletConfiguration.Other of JSON texts.
func other(fields map[string]string) map[string]apiextensionsv1.JSON {
	out := map[string]apiextensionsv1.JSON{}
	for k, v := range fields {
		out[k] = apiextensionsv1.JSON{Raw: []byte(v)}
	}
	return out
}

// TestCheckKubelet checks, per family, which spec.kubelet fields are refused and why: a field
// that is no kubelet field or has the wrong type on every family; on AL2 and Custom every
// undeclared field; on Bottlerocket podsPerCore and the fields it has no setting for.
func TestCheckKubelet(t *testing.T) {
	tests := []struct {
		name        string
		family      string
		kubelet     *awsv1.KubeletConfiguration
		wantReason  string
		wantMessage []string
	}{
		{name: "AL2023 takes every field", family: awsv1.AMIFamilyAL2023, kubelet: &awsv1.KubeletConfiguration{
			PodsPerCore: ptr.To[int32](4), Other: other(map[string]string{"registryPullQPS": "10", "featureGates": `{"A":true}`})}},
		{name: "AL2 takes the declared fields", family: awsv1.AMIFamilyAL2, kubelet: &awsv1.KubeletConfiguration{
			PodsPerCore: ptr.To[int32](4), MaxPods: ptr.To[int32](20)}},
		{name: "AL2 refuses the others", family: awsv1.AMIFamilyAL2, kubelet: &awsv1.KubeletConfiguration{
			MaxPods: ptr.To[int32](20), Other: other(map[string]string{"registryPullQPS": "10", "containerLogMaxSize": `"50Mi"`})},
			wantReason: ReasonUnsupportedKubeletConfiguration, wantMessage: []string{"AL2 AMI family", "containerLogMaxSize, registryPullQPS", "AL2023"}},
		{name: "Bottlerocket takes fields it has settings for", family: awsv1.AMIFamilyBottlerocket, kubelet: &awsv1.KubeletConfiguration{
			Other: other(map[string]string{"registryPullQPS": "10", "shutdownGracePeriod": `"45s"`, "allowedUnsafeSysctls": `["net.core.somaxconn"]`,
				"cpuManagerPolicyOptions": `{"full-pcpus-only":"true"}`, "memorySwap": `{"swapBehavior":"LimitedSwap"}`})}},
		{name: "Bottlerocket refuses podsPerCore and fields without settings", family: awsv1.AMIFamilyBottlerocket, kubelet: &awsv1.KubeletConfiguration{
			PodsPerCore: ptr.To[int32](4),
			Other: other(map[string]string{"featureGates": `{"A":true}`, "registryPullQPS": "10", "cpuManagerPolicyOptions": `{"align-by-socket":"true"}`,
				"memorySwap": `{"swapBehavior":"LimitedSwap","other":1}`})},
			wantReason: ReasonUnsupportedKubeletConfiguration, wantMessage: []string{"Bottlerocket AMI family", "cpuManagerPolicyOptions, featureGates, memorySwap, podsPerCore:"}},
		{name: "Custom refuses undeclared fields", family: awsv1.AMIFamilyCustom, kubelet: &awsv1.KubeletConfiguration{
			Other: other(map[string]string{"registryPullQPS": "10"})},
			wantReason: ReasonUnsupportedKubeletConfiguration, wantMessage: []string{"Custom AMI family", "registryPullQPS", "spec.userData"}},
		{name: "not a kubelet field", family: awsv1.AMIFamilyAL2023, kubelet: &awsv1.KubeletConfiguration{
			Other: other(map[string]string{"registryQPS": "10"})},
			wantReason: ReasonInvalidKubeletConfiguration, wantMessage: []string{"spec.kubelet.registryQPS is not a field"}},
		{name: "registerWithTaints", family: awsv1.AMIFamilyAL2023, kubelet: &awsv1.KubeletConfiguration{
			Other: other(map[string]string{"registerWithTaints": "[]"})},
			wantReason: ReasonInvalidKubeletConfiguration, wantMessage: []string{"spec.kubelet.registerWithTaints cannot be set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, message := CheckKubelet(tt.family, tt.kubelet)
			if reason != tt.wantReason {
				t.Fatalf("reason = %q (%s), want %q", reason, message, tt.wantReason)
			}
			for _, want := range tt.wantMessage {
				if !strings.Contains(message, want) {
					t.Errorf("message %q does not contain %q", message, want)
				}
			}
			opts := baseOptions(tt.family, "")
			if tt.family == awsv1.AMIFamilyCustom {
				opts.UserData = "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--register-with-taints=karpenter.sh/unregistered:NoExecute'\n"
			}
			opts.Kubelet = tt.kubelet
			_, err := Render(opts)
			if tt.wantReason == "" && err != nil {
				t.Errorf("Render: %v", err)
			}
			if tt.wantReason != "" && (err == nil || !strings.Contains(err.Error(), message)) {
				t.Errorf("Render error = %v, want the refusal %q", err, message)
			}
		})
	}
}

// TestRenderKubeletOtherFields checks that the undeclared kubelet fields reach AL2023's kubelet
// configuration as written and Bottlerocket's settings.kubernetes under their keys.
func TestRenderKubeletOtherFields(t *testing.T) {
	t.Run("AL2023", func(t *testing.T) {
		opts := baseOptions(awsv1.AMIFamilyAL2023, "")
		opts.Kubelet = &awsv1.KubeletConfiguration{
			PodsPerCore: ptr.To[int32](4),
			Other: other(map[string]string{"registryPullQPS": "10", "containerLogMaxSize": `"50Mi"`,
				"featureGates": `{"InPlacePodVerticalScaling":true}`, "shutdownGracePeriod": `"45s"`}),
		}
		res, err := Render(opts)
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		got := nodeadmEffective(t, res.UserData, false, false).Config
		for key, want := range map[string]any{
			"registryPullQPS": float64(10), "containerLogMaxSize": "50Mi", "shutdownGracePeriod": "45s",
			"featureGates": map[string]any{"InPlacePodVerticalScaling": true}, "podsPerCore": float64(4), "maxPods": float64(29),
		} {
			if diff := cmp.Diff(want, got[key]); diff != "" {
				t.Errorf("kubelet config %s (-want +got):\n%s", key, diff)
			}
		}
	})
	t.Run("Bottlerocket", func(t *testing.T) {
		opts := baseOptions(awsv1.AMIFamilyBottlerocket, "[settings.kubernetes]\nregistry-qps = 3\n")
		opts.Kubelet = &awsv1.KubeletConfiguration{
			Other: other(map[string]string{"registryPullQPS": "10", "containerLogMaxSize": `"50Mi"`, "shutdownGracePeriod": `"45s"`,
				"shutdownGracePeriodCriticalPods": `"15s"`, "allowedUnsafeSysctls": `["net.core.somaxconn"]`, "seccompDefault": "true",
				"cpuManagerPolicyOptions": `{"full-pcpus-only":"true"}`, "memorySwap": `{"swapBehavior":"LimitedSwap"}`}),
		}
		res, err := Render(opts)
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		doc, err := parseBottlerocket(res.UserData)
		if err != nil {
			t.Fatal(err)
		}
		k8s, _, _ := doc.kubernetes(false)
		for key, want := range map[string]any{
			"registry-qps": int64(10), "container-log-max-size": "50Mi", "shutdown-grace-period": "45s",
			"shutdown-grace-period-for-critical-pods": "15s", "allowed-unsafe-sysctls": []any{"net.core.somaxconn"},
			"seccomp-default": true, "cpu-manager-policy-options": []any{"full-pcpus-only"}, "memory-swap-behavior": "LimitedSwap",
		} {
			if diff := cmp.Diff(want, k8s[key]); diff != "" {
				t.Errorf("settings.kubernetes.%s (-want +got):\n%s", key, diff)
			}
		}
		if !slices.ContainsFunc(res.Warnings, func(w Warning) bool { return w.Reason == "UserDataSettingReplaced" }) {
			t.Errorf("no advice that the userData's registry-qps was replaced: %+v", res.Warnings)
		}
	})
}
