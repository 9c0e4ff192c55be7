package console

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// StartCache starts an informer cache of what the pages read (NodePools, NodeClaims, Nodes, pods,
// DaemonSets, EC2NodeClasses), waits until it has synced, and returns it as the reader to give New. A page
// then reads memory, not the API server: listing 10,000 pods from the API server on every poll
// of every open page would cost the API server, and the page, far more than the page itself. The
// cache runs until ctx is done. An EC2NodeClass CRD that is not installed is not an error (the
// EC2NodeClasses page says there is none).
func StartCache(ctx context.Context, cfg *rest.Config, scheme *kruntime.Scheme) (client.Reader, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, fmt.Errorf("building the console's cache, %w", err)
	}
	// DaemonSets: the Pending page's simulation counts their pods on every new node.
	for _, o := range []client.Object{&v1.NodePool{}, &v1.NodeClaim{}, &corev1.Node{}, &corev1.Pod{}, &appsv1.DaemonSet{}, &awsv1.EC2NodeClass{}} {
		if _, err := c.GetInformer(ctx, o, cache.BlockUntilSynced(false)); err != nil {
			var noMatch *meta.NoKindMatchError
			if errors.As(err, &noMatch) || meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("watching %T for the console, %w", o, err)
		}
	}
	errs := make(chan error, 1)
	go func() { errs <- c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		select {
		case err := <-errs:
			return nil, fmt.Errorf("starting the console's cache, %w", err)
		default:
			return nil, fmt.Errorf("waiting for the console's cache to sync, %w", context.Cause(ctx))
		}
	}
	return c, nil
}
