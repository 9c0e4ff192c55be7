package v1

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodDoNotDisrupt(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	started := func(ago time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-ago)); return &t }
	tests := []struct {
		name          string
		value         *string // nil: no annotation
		startTime     *metav1.Time
		wantProtected bool
		wantUntil     time.Time
		wantErr       string // a substring; "" for no error
	}{
		{name: "absent", startTime: started(time.Hour)},
		{name: "true", value: new("true"), startTime: started(100 * time.Hour), wantProtected: true},
		{name: "duration-running", value: new("4h"), startTime: started(time.Hour), wantProtected: true, wantUntil: now.Add(3 * time.Hour)},
		{name: "duration-compound", value: new("1h30m"), startTime: started(time.Hour), wantProtected: true, wantUntil: now.Add(30 * time.Minute)},
		{name: "duration-elapsed", value: new("4h"), startTime: started(5 * time.Hour)},
		{name: "duration-ends-now", value: new("4h"), startTime: started(4 * time.Hour)},
		{name: "duration-not-started", value: new("4h"), wantProtected: true},
		{name: "false", value: new("false"), startTime: started(time.Hour), wantErr: `karpenter.sh/do-not-disrupt="false" is not "true" or a positive Go duration such as "4h"`},
		{name: "zero", value: new("0s"), startTime: started(time.Hour), wantErr: `"0s" is not`},
		{name: "negative", value: new("-1h"), startTime: started(time.Hour), wantErr: `"-1h" is not`},
		{name: "days", value: new("1d"), startTime: started(time.Hour), wantErr: `"1d" is not`},
		{name: "True", value: new("True"), startTime: started(time.Hour), wantErr: `"True" is not`},
		{name: "empty", value: new(""), startTime: started(time.Hour), wantErr: `"" is not`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{StartTime: tt.startTime}}
			if tt.value != nil {
				pod.Annotations = map[string]string{DoNotDisruptAnnotationKey: *tt.value}
			}
			protected, until, err := PodDoNotDisrupt(pod, now)
			if protected != tt.wantProtected || !until.Equal(tt.wantUntil) {
				t.Errorf("PodDoNotDisrupt = %v until %v, want %v until %v", protected, until, tt.wantProtected, tt.wantUntil)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestObjectDoNotDisrupt(t *testing.T) {
	tests := []struct {
		annotations   map[string]string
		wantProtected bool
		wantErr       bool
	}{
		{annotations: nil},
		{annotations: map[string]string{DoNotDisruptAnnotationKey: "true"}, wantProtected: true},
		{annotations: map[string]string{DoNotDisruptAnnotationKey: "false"}},
		{annotations: map[string]string{DoNotDisruptAnnotationKey: "4h"}, wantErr: true},
		{annotations: map[string]string{DoNotDisruptAnnotationKey: "yes"}, wantErr: true},
	}
	for _, tt := range tests {
		protected, err := ObjectDoNotDisrupt(tt.annotations)
		if protected != tt.wantProtected || (err != nil) != tt.wantErr {
			t.Errorf("ObjectDoNotDisrupt(%v) = %v, %v; want %v, error %v", tt.annotations, protected, err, tt.wantProtected, tt.wantErr)
		}
	}
}
