package e2estack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joinerhq/joiner/awsemu/inspect"
	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/localstack"
)

// PutFaults replaces the emulator's injected faults through its inspection endpoint.
func PutFaults(t *testing.T, ctx context.Context, stack *localstack.Stack, faults inspect.Faults) {
	t.Helper()
	body, err := json.Marshal(faults)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, stack.EmulatorURL+inspect.Prefix+"faults", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT faults %s: %s", body, resp.Status)
	}
}

// Faults reads the emulator's injected faults and the counts of those injected so far.
func Faults(ctx context.Context, stack *localstack.Stack) (inspect.Faults, error) {
	var out inspect.Faults
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, stack.EmulatorURL+inspect.Prefix+"faults", nil)
	if err != nil {
		return out, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("reading the emulator's faults, %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("decoding the emulator's faults, %w", err)
	}
	if out.Injected == nil {
		return out, fmt.Errorf("the emulator reports no injected counts")
	}
	return out, nil
}

// PostEvent asks the emulator to send an EC2 event (inspect.Event's kinds) about an instance to
// the interruption queues.
func PostEvent(t *testing.T, ctx context.Context, stack *localstack.Stack, instanceID, kind string) {
	t.Helper()
	body, err := json.Marshal(inspect.Event{InstanceID: instanceID, Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, stack.EmulatorURL+inspect.Prefix+"events", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST event %s: %s", body, resp.Status)
	}
}

// CheckNothingLeft waits until no NodeClaim, Node, NodePool or live instance is left, then fails
// the test if any instance the emulator ever ran was not launched for a NodePool.
func CheckNothingLeft(t *testing.T, stack *localstack.Stack, within time.Duration) {
	t.Helper()
	ctx := t.Context()
	Eventually(t, within, "nothing left in the cluster or the emulator", func(ctx context.Context) (bool, string, error) {
		var claims v1.NodeClaimList
		var nodes corev1.NodeList
		var pools v1.NodePoolList
		for _, list := range []client.ObjectList{&claims, &nodes, &pools} {
			if err := stack.Client.List(ctx, list); err != nil {
				return false, "", err
			}
		}
		instances, err := LiveInstances(ctx, stack)
		return len(claims.Items)+len(nodes.Items)+len(pools.Items)+len(instances) == 0,
			fmt.Sprintf("%d nodeclaims, %d nodes, %d nodepools, %d live instances", len(claims.Items), len(nodes.Items), len(pools.Items), len(instances)), err
	})
	instances, err := stack.Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range instances {
		// Launches carry their NodePool's tag; the NodeClaim's own follows only once its node
		// registered, so an instance deleted before may never have it.
		if i.Tags[awsv1.TagKeyNodePool] == "" {
			t.Errorf("instance %s was not launched for a NodePool", i.ID)
		}
	}
}
