package unavailableofferings

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joinerhq/joiner/pkg/aws/instancetype"
)

const name = "aws.unavailableofferings"

// ConfigMapName is the record's ConfigMap, in the controller's namespace.
const ConfigMapName = "joiner-unavailable-offerings"

// SyncInterval is how often the leader writes the record when nothing was marked: expired
// entries go, and a write that failed is tried again.
const SyncInterval = 10 * time.Second

// Offerings is the record kept (instancetype.UnavailableOfferings).
type Offerings interface {
	Entries() []instancetype.Unavailable
	Restore([]instancetype.Unavailable)
	Changed() <-chan struct{}
}

// Controller keeps Offerings in the ConfigMap. Build it with NewController.
type Controller struct {
	kube      client.Client
	reader    client.Reader
	offerings Offerings
	namespace string
	clock     clock.WithTicker
	// elected is closed once this replica leads (the manager's Elected).
	elected <-chan struct{}
	// written is the data last written, or read when nothing was written yet.
	written map[string]string
}

// NewController returns the controller keeping offerings in namespace's ConfigMapName through
// kube. Until Register, reads go through kube too and the replica counts as elected.
func NewController(kube client.Client, offerings Offerings, namespace string, clk clock.WithTicker) *Controller {
	elected := make(chan struct{})
	close(elected)
	return &Controller{kube: kube, reader: kube, offerings: offerings, namespace: namespace, clock: clk, elected: elected}
}

// Name is the controller's name in logs.
func (c *Controller) Name() string { return name }

// Register runs the controller on every replica once mgr starts: reading the API server
// directly, writing once elected.
func (c *Controller) Register(_ context.Context, mgr manager.Manager) error {
	c.reader = mgr.GetAPIReader()
	c.elected = mgr.Elected()
	return mgr.Add(c)
}

// NeedLeaderElection is false: every replica reads the record as it starts, so that a replica
// that becomes leader has it before its first launch; only the leader writes (Start).
func (c *Controller) NeedLeaderElection() bool { return false }

// Start reads the record, waits to be elected (reading it again when it had to wait), then
// writes it whenever an offering is marked and every SyncInterval, until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName(name)
	ctx = log.IntoContext(ctx, logger)
	if err := c.Load(ctx); err != nil {
		logger.Error(err, "Reading the unavailable offerings record")
	}
	select {
	case <-c.elected:
		// Leading already (or no election): what was just read is current.
	default:
		select {
		case <-ctx.Done():
			return nil
		case <-c.elected:
		}
		// A standby's record may be stale: read what the earlier leader wrote last.
		if err := c.Load(ctx); err != nil {
			logger.Error(err, "Reading the unavailable offerings record")
		}
	}
	ticker := c.clock.NewTicker(SyncInterval)
	defer ticker.Stop()
	for {
		if err := c.Save(ctx); err != nil {
			logger.Error(err, "Writing the unavailable offerings record")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.offerings.Changed():
		case <-ticker.C():
		}
	}
}

// Load adds the record's entries to the offerings. A missing ConfigMap is an empty record; an
// entry that cannot be read is skipped, and named in the error returned.
func (c *Controller) Load(ctx context.Context) error {
	cm := &corev1.ConfigMap{}
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: ConfigMapName}, cm); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("getting configmap %s/%s, %w", c.namespace, ConfigMapName, err))
	}
	entries, err := decode(cm.Data)
	c.offerings.Restore(entries)
	if len(entries) > 0 {
		log.FromContext(ctx).Info("Read the unavailable offerings record", "offerings", len(entries))
	}
	if err != nil {
		return fmt.Errorf("reading configmap %s/%s, %w", c.namespace, ConfigMapName, err)
	}
	return nil
}

// Save writes the offerings to the ConfigMap, creating it, unless they are what was last
// written.
func (c *Controller) Save(ctx context.Context) error {
	data := encode(c.offerings.Entries())
	if c.written != nil && maps.Equal(data, c.written) {
		return nil
	}
	cm := &corev1.ConfigMap{}
	err := c.reader.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: ConfigMapName}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: ConfigMapName}, Data: data}
		if err := c.kube.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating configmap %s/%s, %w", c.namespace, ConfigMapName, err)
		}
	case err != nil:
		return fmt.Errorf("getting configmap %s/%s, %w", c.namespace, ConfigMapName, err)
	default:
		cm.Data = data
		if err := c.kube.Update(ctx, cm); err != nil {
			return fmt.Errorf("updating configmap %s/%s, %w", c.namespace, ConfigMapName, err)
		}
	}
	c.written = data
	return nil
}

// encode is the ConfigMap's data of the entries.
func encode(entries []instancetype.Unavailable) map[string]string {
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.InstanceType+"_"+e.Zone+"_"+e.CapacityType] = e.Expires.UTC().Format(time.RFC3339)
	}
	return out
}

// decode reads the ConfigMap's data; the entries it cannot read are named in the error.
func decode(data map[string]string) ([]instancetype.Unavailable, error) {
	var out []instancetype.Unavailable
	var errs []error
	for key, value := range data {
		parts := strings.Split(key, "_")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			errs = append(errs, fmt.Errorf("key %q is not <instance type>_<zone>_<capacity type>: delete it", key))
			continue
		}
		expires, err := time.Parse(time.RFC3339, value)
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: value %q is not an RFC 3339 time: delete the key", key, value))
			continue
		}
		out = append(out, instancetype.Unavailable{InstanceType: parts[0], Zone: parts[1], CapacityType: parts[2], Expires: expires})
	}
	return out, errors.Join(errs...)
}
