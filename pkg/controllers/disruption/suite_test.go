package disruption_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/internal/testenv"
)

// The package's one control plane; tests call Disrupt directly, each with NodePools of its own.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, &env, testenv.CreateDefaultServiceAccount))
}

// recorder keeps the events the controller records as "name type reason note".
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(regarding, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetName()
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s %s", name, eventType, reason, fmt.Sprintf(note, args...)))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}
