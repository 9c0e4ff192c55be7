package scheduling_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

func TestParseSchedulerConfig(t *testing.T) {
	zone1 := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule}}
	kube := func(profiles string) string {
		return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {kubeconfig: /etc/k}\n" + profiles
	}
	for _, tc := range []struct {
		name    string
		doc     string
		want    []corev1.TopologySpreadConstraint
		wantErr string
	}{
		{name: "empty", doc: "  \n"},
		{name: "karpenter's document", doc: "podTopologySpread:\n  defaultConstraints:\n  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}\n", want: zone1},
		{name: "karpenter's document without spreads", doc: "{}", want: nil},
		{name: "karpenter's document, unknown field", doc: "podTopologySpread: {defaultConstraint: []}\n", wantErr: "unknown field"},
		{name: "karpenter's document, selector", doc: "podTopologySpread:\n  defaultConstraints:\n  - {maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n", wantErr: "labelSelector must not be set"},
		{name: "kube-scheduler, List", doc: kube("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}\n"), want: zone1},
		{name: "kube-scheduler, System by default", doc: kube("profiles:\n- schedulerName: default-scheduler\n"), want: scheduling.SystemDefaultConstraints()},
		{name: "kube-scheduler, no profiles", doc: kube(""), want: scheduling.SystemDefaultConstraints()},
		{name: "kube-scheduler, another profile's args ignored", doc: kube("profiles:\n- schedulerName: other\n  pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List}\n"), want: scheduling.SystemDefaultConstraints()},
		{name: "kube-scheduler, List of none", doc: kube("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List}\n"), want: nil},
		{name: "kube-scheduler, System with constraints", doc: kube("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule}\n"), wantErr: "must be empty when defaultingType is System"},
		{name: "kube-scheduler, bad defaultingType", doc: kube("profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: Mine}\n"), wantErr: "must be System or List"},
		{name: "another kind", doc: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "is not KubeSchedulerConfiguration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scheduling.ParseSchedulerConfig([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i].String() != tc.want[i].String() {
					t.Errorf("[%d] = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
