package joinfailure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cloudprovider"
)

// MaxLaunchesPerCause is how many NodeClaims a NodePool may see fail for one certain cause with
// unchanged inputs before its launches are held: the first, and one more to confirm it.
const MaxLaunchesPerCause = 2

// DefaultHold is how long launches stay held after the last failure when nothing the
// fingerprint covers changes. Inputs it cannot see (EKS access entries, IAM) may be fixed
// meanwhile, so the hold lapses and one more launch tries again, as often as the registration
// timeout would have replaced the node.
const DefaultHold = 15 * time.Minute

// Failure is a certain cause of failed joins recorded on a NodePool.
type Failure struct {
	// Reason and Message are the NodeClaim's Registered=False reason and message.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// NodeClaims are the NodeClaims that failed for it, oldest first.
	NodeClaims []string `json:"nodeClaims"`
	// Fingerprint is Inputs when it was recorded.
	Fingerprint string `json:"fingerprint"`
	// Time is when the last NodeClaim failed.
	Time metav1.Time `json:"time"`
}

// Read returns the NodePool's recorded join failure, or nil when there is none or the
// annotation does not parse (a record Joiner did not write is ignored, not trusted).
func Read(np *v1.NodePool) *Failure {
	raw := np.Annotations[v1.JoinFailureAnnotationKey]
	if raw == "" {
		return nil
	}
	f := &Failure{}
	if err := json.Unmarshal([]byte(raw), f); err != nil || f.Reason == "" {
		return nil
	}
	return f
}

// Record adds the NodeClaim's failure for reason to the NodePool's record (a new record when the
// cause or the fingerprint differs) and returns the annotation value. A NodeClaim already in the
// record is not counted twice.
func Record(prev *Failure, nodeClaim, reason, message, fingerprint string, now time.Time) (string, *Failure) {
	f := &Failure{Reason: reason, Message: message, Fingerprint: fingerprint, Time: metav1.NewTime(now)}
	if prev != nil && prev.Reason == reason && prev.Fingerprint == fingerprint {
		f.NodeClaims = slices.Clone(prev.NodeClaims)
	}
	if !slices.Contains(f.NodeClaims, nodeClaim) {
		f.NodeClaims = append(f.NodeClaims, nodeClaim)
	}
	raw, err := json.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("encoding join failure: %v", err)) // plain values always marshal
	}
	return string(raw), f
}

// awsAuth is the ConfigMap through which EKS maps IAM roles to Kubernetes identities.
var awsAuth = client.ObjectKey{Namespace: "kube-system", Name: "aws-auth"}

// Inputs is a fingerprint of what decides whether the NodePool's nodes can join and that the
// cluster shows: the NodePool's spec, its node class's identity and generation, and the data of
// kube-system/aws-auth. reader should read from the API server (aws-auth is not cached). EKS
// access entries are not covered (DefaultHold bounds how long a fix there goes unseen).
func Inputs(ctx context.Context, reader client.Reader, cloud cloudprovider.CloudProvider, np *v1.NodePool) (string, error) {
	h := sha256.New()
	spec, err := json.Marshal(np.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("fingerprinting nodepool %s, %w", np.Name, err)
	}
	h.Write(spec)
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		if obj := cloudprovider.NodeClassObject(cloud, ref); obj != nil {
			err := reader.Get(ctx, client.ObjectKey{Name: ref.Name}, obj)
			switch {
			case apierrors.IsNotFound(err):
				fmt.Fprintf(h, "|nodeclass:absent")
			case err != nil:
				return "", fmt.Errorf("fingerprinting nodepool %s, reading %s %s, %w", np.Name, ref.Kind, ref.Name, err)
			default:
				fmt.Fprintf(h, "|nodeclass:%s/%d", obj.GetUID(), obj.GetGeneration())
			}
		}
	}
	cm := &corev1.ConfigMap{}
	err = reader.Get(ctx, awsAuth, cm)
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(h, "|aws-auth:absent")
	case err != nil:
		return "", fmt.Errorf("fingerprinting nodepool %s, reading kube-system/aws-auth, %w", np.Name, err)
	default:
		data, _ := json.Marshal(cm.Data) // map keys are sorted
		h.Write([]byte("|aws-auth:"))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// Held reports whether the NodePool's launches are held: a recorded certain cause failed
// MaxLaunchesPerCause NodeClaims, nothing Inputs covers changed since, and the last failure
// is younger than hold. It returns the record that holds them.
func Held(ctx context.Context, reader client.Reader, cloud cloudprovider.CloudProvider, np *v1.NodePool, now time.Time, hold time.Duration) (*Failure, bool, error) {
	f := Read(np)
	if f == nil || len(f.NodeClaims) < MaxLaunchesPerCause || now.Sub(f.Time.Time) >= hold {
		return f, false, nil
	}
	fp, err := Inputs(ctx, reader, cloud, np)
	if err != nil {
		return f, false, err
	}
	return f, fp == f.Fingerprint, nil
}
