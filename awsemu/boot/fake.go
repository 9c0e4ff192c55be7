package boot

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

var _ APIServer = (*FakeAPIServer)(nil)

// FakeAPIServer is an in-memory APIServer for tests of code that drives a Booter, such as the
// emulator's EC2 service, without an API server. Set the knobs before Boot; read Registered
// after. It is safe for concurrent use.
//
// Limits: it validates nothing and runs no admission (a real API server rejects invalid names
// and labels and adds the node.kubernetes.io/not-ready taint); RegisterNode never reports a name
// conflict. When in doubt, use a Registrar against internal/testenv.
type FakeAPIServer struct {
	mu sync.Mutex
	// MapRoles and ConfigMapFound are what AWSAuth returns.
	MapRoles       string
	ConfigMapFound bool
	// AWSAuthErr and RegisterErr, when set, are returned by AWSAuth and RegisterNode.
	AWSAuthErr  error
	RegisterErr error
	// Registered records the Nodes passed to successful RegisterNode calls, oldest first.
	Registered []*corev1.Node
}

// AWSAuth implements APIServer.
func (f *FakeAPIServer) AWSAuth(context.Context) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.MapRoles, f.ConfigMapFound, f.AWSAuthErr
}

// RegisterNode implements APIServer.
func (f *FakeAPIServer) RegisterNode(_ context.Context, node *corev1.Node) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.RegisterErr != nil {
		return f.RegisterErr
	}
	f.Registered = append(f.Registered, node.DeepCopy())
	return nil
}
