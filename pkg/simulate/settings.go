package simulate

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/scheduling"
)

// manifestWorkloads returns what default spread selectors are deduced from in the manifests:
// their Services, and the controllers of their expanded pods, which it sets on those pods as
// their controller owner reference (as the cluster's pods carry one). Only called with default
// constraints: without them the pods are left as decoded.
func manifestWorkloads(objects *manifest.Objects) (*scheduling.DefaultSpread, error) {
	w := &scheduling.DefaultSpread{}
	for _, u := range objects.Ignored {
		if gvk := u.GroupVersionKind(); gvk.Group != "" || gvk.Kind != "Service" {
			continue
		}
		svc := &corev1.Service{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, svc); err != nil {
			return nil, fmt.Errorf("reading Service %s, %w", u.GetName(), err)
		}
		if svc.Namespace == "" {
			svc.Namespace = corev1.NamespaceDefault
		}
		w.Services = append(w.Services, svc)
	}
	for _, o := range objects.Owners {
		for _, p := range o.Pods {
			p.OwnerReferences = append(p.OwnerReferences, ownerRef(o))
		}
		switch o.Kind {
		case "ReplicaSet":
			rs := &appsv1.ReplicaSet{}
			rs.Namespace, rs.Name, rs.Spec.Selector = o.Namespace, o.Name, o.Selector
			w.ReplicaSets = append(w.ReplicaSets, rs)
		case "StatefulSet":
			ss := &appsv1.StatefulSet{}
			ss.Namespace, ss.Name, ss.Spec.Selector = o.Namespace, o.Name, o.Selector
			w.StatefulSets = append(w.StatefulSets, ss)
		}
	}
	return w, nil
}

func ownerRef(o manifest.Owner) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: o.Kind, Name: o.Name, Controller: new(true)}
}
