package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePoolHashVersion is the value of the karpenter.sh/nodepool-hash-version annotation: how
// Hash computes. Change it whenever Hash changes what it reads.
const NodePoolHashVersion = "v1"

// Hash is the hash of the fields of the NodePool's template that a NodeClaim copies and that
// cannot be checked on the node later: template labels and annotations, taints, startup taints,
// expireAfter and terminationGracePeriod. Requirements and the node class are left out: drift
// checks those against the instance itself. Provisioning stamps it on every NodeClaim
// (karpenter.sh/nodepool-hash) and drift compares with it, so both read this one method, as
// upstream's NodePool.Hash.
func (in *NodePool) Hash() string {
	t := in.Spec.Template
	raw, err := json.Marshal(struct {
		Labels, Annotations    map[string]string
		Taints, StartupTaints  []corev1.Taint
		ExpireAfter            string
		TerminationGracePeriod *metav1.Duration
	}{t.Labels, t.Annotations, t.Spec.Taints, t.Spec.StartupTaints, t.Spec.ExpireAfter.String(), t.Spec.TerminationGracePeriod})
	if err != nil {
		panic(fmt.Sprintf("hashing nodepool %s: %v", in.Name, err)) // plain values always marshal
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
