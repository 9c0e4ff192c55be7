package schedulinginput

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/pkg/scheduling"
)

// ApplySettings sets in's scheduling policies from st and, when st has default topology spread
// constraints, reads through r the Services, ReplicationControllers, ReplicaSets and
// StatefulSets their selectors are deduced from (kube-scheduler's PodTopologySpread reads the
// same). Nothing is read without default constraints. A kind that cannot be listed is left out
// and logged, as kube-scheduler goes on without a lister's answer: the pods it would have
// selected get a narrower selector, or none.
func ApplySettings(ctx context.Context, r client.Reader, st scheduling.Settings, in *scheduling.Input) {
	if len(st.DefaultConstraints) == 0 {
		st.Apply(in, nil)
		return
	}
	w := &scheduling.DefaultSpread{}
	logger := log.FromContext(ctx)
	var services corev1.ServiceList
	if err := r.List(ctx, &services); err != nil {
		logger.Error(err, "Listing services for default topology spread selectors; going on without them")
	}
	for i := range services.Items {
		w.Services = append(w.Services, &services.Items[i])
	}
	var rcs corev1.ReplicationControllerList
	if err := r.List(ctx, &rcs); err != nil {
		logger.Error(err, "Listing replicationcontrollers for default topology spread selectors; going on without them")
	}
	for i := range rcs.Items {
		w.ReplicationControllers = append(w.ReplicationControllers, &rcs.Items[i])
	}
	var rss appsv1.ReplicaSetList
	if err := r.List(ctx, &rss); err != nil {
		logger.Error(err, "Listing replicasets for default topology spread selectors; going on without them")
	}
	for i := range rss.Items {
		w.ReplicaSets = append(w.ReplicaSets, &rss.Items[i])
	}
	var sss appsv1.StatefulSetList
	if err := r.List(ctx, &sss); err != nil {
		logger.Error(err, "Listing statefulsets for default topology spread selectors; going on without them")
	}
	for i := range sss.Items {
		w.StatefulSets = append(w.StatefulSets, &sss.Items[i])
	}
	st.Apply(in, w)
}
