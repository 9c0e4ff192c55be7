package legacyboot

import (
	"sync"
	"time"

	"github.com/joinerhq/joiner/awsemu/state"
)

// Delay is how long after an instance starts running its userData has run and the kubelet starts.
const Delay = 20 * time.Second

// Booter boots running instances: after Delay it interprets each one's userData by its image's
// family, appends what the boot printed to the console, and records the kubelet it started.
// Register Observe as a state.Observer. Booter is safe for concurrent use.
type Booter struct {
	mu       sync.Mutex
	kubelets map[string]*Kubelet
	mapRoles string
}

// SetAWSAuth sets the mapRoles of the cluster's kube-system/aws-auth ConfigMap that join checks
// read ("" for no ConfigMap). The planned Kubernetes side keeps it in sync with the cluster.
func (b *Booter) SetAWSAuth(mapRoles string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mapRoles = mapRoles
}

// NewBooter returns a Booter with no booted instances.
func NewBooter() *Booter { return &Booter{kubelets: map[string]*Kubelet{}} }

// Observe boots every running instance whose boot delay has passed and that has not booted yet.
func (b *Booter) Observe(w *state.World) {
	for _, rn := range state.SortedKeys(w.Regions) {
		r := w.Regions[rn]
		for _, id := range state.SortedKeys(r.Instances) {
			i := r.Instances[id]
			if i.State != state.InstanceRunning || i.BootPhase != "" || w.Now.Sub(i.StateChangedAt) < Delay {
				continue
			}
			family := state.FamilyCustom
			if img := r.Images[i.ImageID]; img != nil && img.Family != "" {
				family = img.Family
			}
			res := Interpret(family, i.UserData)
			i.Console = append(i.Console, res.Console...)
			if res.Err != nil {
				i.BootPhase = state.BootFailed
				continue
			}
			i.Console = append(i.Console, "kubelet: starting for cluster "+res.Kubelet.ClusterName)
			b.mu.Lock()
			b.kubelets[id] = res.Kubelet
			mapRoles := b.mapRoles
			b.mu.Unlock()
			if err := b.join(w, r, i, res.Kubelet, mapRoles); err != nil {
				i.BootPhase = state.BootUnauthorized
				i.Console = append(i.Console, "kubelet: "+err.Error())
				continue
			}
			i.BootPhase = state.BootKubeletRunning
		}
	}
}

// Kubelet returns the kubelet an instance started, if it has booted successfully.
func (b *Booter) Kubelet(instanceID string) (*Kubelet, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.kubelets[instanceID]
	return k, ok
}

// join checks that the instance's role may register a Node in the kubelet's cluster.
func (b *Booter) join(w *state.World, r *state.Region, i *state.Instance, k *Kubelet, mapRoles string) error {
	c := r.Clusters[k.ClusterName]
	if c == nil {
		return &JoinError{Reason: "Unauthorized", Message: "no EKS cluster named " + k.ClusterName + " in " + r.Name}
	}
	var roleARN string
	for _, p := range w.IAM.InstanceProfiles {
		if p.ARN == i.InstanceProfileARN {
			if role := w.IAM.Roles[p.RoleName]; role != nil {
				roleARN = role.ARN
			}
		}
	}
	return MayJoin(roleARN, c, mapRoles)
}
