package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
)

// Instance is an emulated instance as the emulator's inspection endpoint reports it; only the
// fields the stack reads.
type Instance struct {
	ID           string            `json:"id"`
	Zone         string            `json:"zone"`
	InstanceType string            `json:"instanceType"`
	CapacityType string            `json:"capacityType"`
	State        string            `json:"state"`
	BootReason   string            `json:"bootReason"`
	BootMessage  string            `json:"bootMessage"`
	NodeName     string            `json:"nodeName"`
	PricePerHour float64           `json:"pricePerHour"`
	Tags         map[string]string `json:"tags"`
	Console      []string          `json:"console"`
}

// Live reports whether the instance is pending or running: it costs money and may become a node.
func (i *Instance) Live() bool { return i.State == "pending" || i.State == "running" }

// Instances lists the emulator's instances.
func (s *Stack) Instances(ctx context.Context) ([]Instance, error) {
	req, err := newGet(ctx, s.EmulatorURL+"/_awsemu/instances")
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing emulated instances, %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out []Instance
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decoding emulated instances, %w", err)
	}
	return out, nil
}

// storyTimeout bounds each half of the demo; the emulator's default timings need about a minute.
const storyTimeout = 5 * time.Minute

// Demo tells the sample story on a stack started with the emulator, the controller and the
// samples: it shows the sample Deployment's pending pods become NodeClaims that launch, register
// and initialize, the pods run, and what the instances cost per hour; then it scales the
// Deployment to zero and shows the empty nodes consolidated and their instances terminated. It
// returns nil only when both halves completed; otherwise it explains what each NodeClaim and
// instance is waiting for.
func (s *Stack) Demo(ctx context.Context) error {
	deploy, err := sampleDeployment()
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(deploy)
	w := &watcher{stack: s, out: s.out, start: time.Now(), printed: map[string]string{}, deployment: key}

	fmt.Fprintf(s.out, "\n== Scaling up: deployment/%s asks for %d pods; Joiner provisions nodes for them\n", key.Name, *deploy.Spec.Replicas)
	if err := w.until(ctx, "every pod Running", func(p *picture) bool {
		return p.desired > 0 && p.running == int(p.desired) && len(p.nodeClaims) > 0
	}); err != nil {
		return err
	}
	if err := w.summary(ctx); err != nil {
		return err
	}

	fmt.Fprintf(s.out, "\n== Scaling down: deployment/%s to 0; empty nodes are consolidated after the NodePool's consolidateAfter\n", key.Name)
	if err := s.Client.Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}},
		client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`))); err != nil {
		return fmt.Errorf("scaling deployment %s to zero, %w", key, err)
	}
	if err := w.until(ctx, "every node gone", func(p *picture) bool {
		return p.desired == 0 && p.pods == 0 && len(p.nodeClaims) == 0 && p.liveInstances == 0
	}); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "\nDone in %s: pods ran on nodes Joiner launched, and the nodes went when the pods did.\n", w.elapsed())
	return nil
}

func sampleDeployment() (*appsv1.Deployment, error) {
	objects, err := SampleObjects("Deployment")
	if err != nil {
		return nil, err
	}
	if len(objects) != 1 {
		return nil, fmt.Errorf("the samples hold %d Deployments, want 1", len(objects))
	}
	u, ok := objects[0].(interface{ UnstructuredContent() map[string]any })
	if !ok {
		return nil, fmt.Errorf("sample Deployment is a %T", objects[0])
	}
	raw, err := json.Marshal(u.UnstructuredContent())
	if err != nil {
		return nil, fmt.Errorf("encoding sample Deployment, %w", err)
	}
	d := &appsv1.Deployment{}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("decoding sample Deployment, %w", err)
	}
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	return d, nil
}

// picture is the state of the story at one moment.
type picture struct {
	nodeClaims     []v1.NodeClaim
	nodeClasses    []awsv1.EC2NodeClass
	instances      map[string]Instance // by id
	desired        int32
	pods, running  int
	liveInstances  int
	costPerHour    float64
	unschedulable  string
	deletingClaims int
}

// watcher prints each change of the story once.
type watcher struct {
	stack      *Stack
	out        io.Writer
	start      time.Time
	deployment client.ObjectKey
	// printed is the last line printed per subject, so each change prints once.
	printed map[string]string
	last    *picture
}

func (w *watcher) elapsed() time.Duration { return time.Since(w.start).Truncate(time.Second) }

// say prints line for subject unless it is what was last printed for it.
func (w *watcher) say(subject, line string) {
	if w.printed[subject] == line {
		return
	}
	w.printed[subject] = line
	fmt.Fprintf(w.out, "[%6s] %s\n", w.elapsed(), line)
}

// until looks every second, printing what changed, until done holds or storyTimeout passes.
func (w *watcher) until(ctx context.Context, goal string, done func(*picture) bool) error {
	ctx, cancel := context.WithTimeout(ctx, storyTimeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		p, err := w.look(ctx)
		if err == nil {
			w.last = p
			w.narrate(p)
			if done(p) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the story stopped short of %s after %s:\n%s", goal, storyTimeout, w.explain())
		case <-tick.C:
		}
	}
}

func (w *watcher) look(ctx context.Context) (*picture, error) {
	c := w.stack.Client
	p := &picture{instances: map[string]Instance{}}
	var claims v1.NodeClaimList
	var classes awsv1.EC2NodeClassList
	var deploy appsv1.Deployment
	var pods corev1.PodList
	if err := c.List(ctx, &claims); err != nil {
		return nil, err
	}
	if err := c.List(ctx, &classes); err != nil {
		return nil, err
	}
	if err := c.Get(ctx, w.deployment, &deploy); err != nil {
		return nil, err
	}
	selector, err := metav1.LabelSelectorAsSelector(deploy.Spec.Selector)
	if err != nil {
		return nil, err
	}
	if err := c.List(ctx, &pods, client.InNamespace(w.deployment.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, err
	}
	instances, err := w.stack.Instances(ctx)
	if err != nil {
		return nil, err
	}
	p.nodeClaims, p.nodeClasses = claims.Items, classes.Items
	slices.SortFunc(p.nodeClaims, func(a, b v1.NodeClaim) int { return strings.Compare(a.Name, b.Name) })
	p.desired = *deploy.Spec.Replicas
	for _, pod := range pods.Items {
		p.pods++
		if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			p.running++
		}
		if cond := podCondition(&pod, corev1.PodScheduled); cond != nil && cond.Status == corev1.ConditionFalse && p.unschedulable == "" {
			p.unschedulable = cond.Message
		}
	}
	for _, i := range instances {
		p.instances[i.ID] = i
		if i.Live() {
			p.liveInstances++
			p.costPerHour += i.PricePerHour
		}
	}
	for _, nc := range p.nodeClaims {
		if nc.DeletionTimestamp != nil {
			p.deletingClaims++
		}
	}
	return p, nil
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// narrate prints the changes since the last look.
func (w *watcher) narrate(p *picture) {
	for _, nc := range p.nodeClasses {
		if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady); c != nil {
			line := fmt.Sprintf("ec2nodeclass/%s Ready=%s", nc.Name, c.Status)
			if c.Status != metav1.ConditionTrue {
				line += ": " + c.Message
			}
			w.say("ec2nodeclass/"+nc.Name, line)
		}
	}
	seen := map[string]bool{}
	for i := range p.nodeClaims {
		nc := &p.nodeClaims[i]
		subject := "nodeclaim/" + nc.Name
		seen[subject] = true
		for step, line := range w.claimSteps(nc, p) {
			w.say(subject+"/"+step, line)
		}
	}
	for subject := range w.printed {
		name, isClaim := strings.CutSuffix(subject, "/created")
		if isClaim && !seen[name] && w.printed[subject] != "" {
			w.say(name+"/gone", fmt.Sprintf("%-28s gone", name))
			w.printed[subject] = "" // gone for good: print nothing more for it
		}
	}
	w.say("pods", fmt.Sprintf("pods Running %d/%d (deployment/%s wants %d)", p.running, p.pods, w.deployment.Name, p.desired))
	w.say("cost", fmt.Sprintf("cost $%.4f/h across %d live instance(s)", p.costPerHour, p.liveInstances))
}

// claimSteps are the lines of the lifecycle steps a NodeClaim has reached, by step, in order
// of the steps; a step not reached yet but failing says why.
func (w *watcher) claimSteps(nc *v1.NodeClaim, p *picture) iter.Seq2[string, string] {
	name := fmt.Sprintf("%-28s", "nodeclaim/"+nc.Name)
	return func(yield func(string, string) bool) {
		if !yield("created", name+" created for pending pods") {
			return
		}
		for _, step := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
			c := meta.FindStatusCondition(nc.Status.Conditions, step)
			if c == nil {
				return
			}
			if c.Status != metav1.ConditionTrue {
				if c.Status == metav1.ConditionFalse {
					yield(step, fmt.Sprintf("%s %s=False %s: %s", name, step, c.Reason, c.Message))
				}
				return
			}
			var line string
			switch step {
			case v1.ConditionTypeLaunched:
				id := instanceID(nc.Status.ProviderID)
				line = fmt.Sprintf("%s launched %s %s %s in %s at $%.4f/h", name, id, nc.Labels[corev1.LabelInstanceTypeStable],
					nc.Labels[v1.CapacityTypeLabelKey], nc.Labels[corev1.LabelTopologyZone], p.instances[id].PricePerHour)
			case v1.ConditionTypeRegistered:
				line = name + " registered as node " + nc.Status.NodeName
			default:
				line = name + " initialized: the node is Ready and takes pods"
			}
			if !yield(step, line) {
				return
			}
		}
		if nc.DeletionTimestamp != nil {
			reason := ""
			if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeDisruptionReason); c != nil {
				reason = " (" + c.Reason + ")"
			}
			yield("deleting", name+" deleting"+reason+": draining the node and terminating "+instanceID(nc.Status.ProviderID))
		}
	}
}

// instanceID is the EC2 instance id at the end of an aws:///zone/i-... providerID.
func instanceID(providerID string) string {
	return providerID[strings.LastIndex(providerID, "/")+1:]
}

// summary prints the nodes and what they cost once every pod runs.
func (w *watcher) summary(ctx context.Context) error {
	p := w.last
	var nodes corev1.NodeList
	if err := w.stack.Client.List(ctx, &nodes); err != nil {
		return fmt.Errorf("listing nodes, %w", err)
	}
	fmt.Fprintf(w.out, "\nEvery pod Running after %s on %d node(s):\n", w.elapsed(), len(nodes.Items))
	tw := tabwriter.NewWriter(w.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tNODEPOOL\tINSTANCE TYPE\tCAPACITY\tZONE\t$/H")
	for _, n := range nodes.Items {
		i := p.instances[instanceID(n.Spec.ProviderID)]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\n", n.Name, n.Labels[v1.NodePoolLabelKey], n.Labels[corev1.LabelInstanceTypeStable],
			n.Labels[v1.CapacityTypeLabelKey], n.Labels[corev1.LabelTopologyZone], i.PricePerHour)
	}
	fmt.Fprintf(tw, "TOTAL\t\t\t\t\t%.4f\n", p.costPerHour)
	return tw.Flush()
}

// explain says, for a story that stalled, what each NodeClaim and instance is waiting for.
func (w *watcher) explain() string {
	p := w.last
	if p == nil {
		return "  the API server or the emulator did not answer"
	}
	var b strings.Builder
	if p.unschedulable != "" {
		fmt.Fprintf(&b, "  a pending pod: %s\n", p.unschedulable)
	}
	for _, nc := range p.nodeClaims {
		for _, c := range nc.Status.Conditions {
			if c.Status != metav1.ConditionTrue && c.Type != v1.ConditionTypeConsolidatable && c.Type != v1.ConditionTypeDrifted {
				fmt.Fprintf(&b, "  nodeclaim/%s %s=%s %s: %s\n", nc.Name, c.Type, c.Status, c.Reason, c.Message)
			}
		}
	}
	for _, i := range p.instances {
		if !i.Live() {
			continue
		}
		fmt.Fprintf(&b, "  instance %s %s %s", i.ID, i.InstanceType, i.State)
		if i.BootReason != "" {
			fmt.Fprintf(&b, " boot %s: %s", i.BootReason, i.BootMessage)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  logs: %s", w.stack.logDir())
	return b.String()
}
