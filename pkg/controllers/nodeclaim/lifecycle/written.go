package lifecycle

import (
	"encoding/json"
	"hash/fnv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// writtenStaleFor is how long after a status write a reconcile that arrives at the same status
// is taken for one reading a cache that lags behind the write. A cache lags by well under a
// second even under load; after this, the same status is written again, which is harmless.
const writtenStaleFor = 30 * time.Second

// writtenStatuses remembers, by NodeClaim UID, a digest of the status this controller last wrote
// and when. A NodeClaim's Node changes right after the controller writes the NodeClaim (the
// registration patch, the control plane's and the kubelet's writes), and the reconcile those
// Node events start can read the NodeClaim from a cache that does not show the write yet: it
// arrived at the same status again, and its patch failed on the stale resourceVersion (a third
// of the lifecycle's status patches in a 1,000-pod scale-up) and would have told the same
// transitions twice.
type writtenStatuses struct {
	mu      sync.Mutex
	written map[types.UID]written
}

type written struct {
	digest uint64
	at     time.Time
}

// shown reports whether nodeClaim's status, conditions' transition times aside, is what was
// last written to it less than writtenStaleFor before now.
func (w *writtenStatuses) shown(nodeClaim *v1.NodeClaim, now time.Time) bool {
	w.mu.Lock()
	last, ok := w.written[nodeClaim.UID]
	w.mu.Unlock()
	return ok && now.Sub(last.at) < writtenStaleFor && last.digest == statusDigest(nodeClaim.Status)
}

// record remembers nodeClaim's status as written at now.
func (w *writtenStatuses) record(nodeClaim *v1.NodeClaim, now time.Time) {
	d := statusDigest(nodeClaim.Status)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[types.UID]written{}
	}
	w.written[nodeClaim.UID] = written{digest: d, at: now}
}

func (w *writtenStatuses) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, uid)
}

// statusDigest is a hash of status with the conditions' transition times left out: two
// reconciles arriving at one status stamp its new conditions with their own clock readings.
func statusDigest(status v1.NodeClaimStatus) uint64 {
	status.Conditions = append([]metav1.Condition(nil), status.Conditions...)
	for i := range status.Conditions {
		status.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	h := fnv.New64a()
	// Marshalling a status (strings, quantities, times) does not fail.
	raw, _ := json.Marshal(status)
	h.Write(raw)
	return h.Sum64()
}
