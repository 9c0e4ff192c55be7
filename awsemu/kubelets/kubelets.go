package kubelets

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joinerhq/joiner/awsemu/boot"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// Timings of the emulated kubelets.
const (
	// RegisterRetryEvery is how long a kubelet refused by the API server waits before trying to
	// register again (the kubelet's own backoff caps at 7s).
	RegisterRetryEvery = 7 * time.Second
	// HeartbeatEvery is how often a joined kubelet renews its Node's Lease and checks its Node's
	// status, posting it when it changed (the kubelet's nodeStatusUpdateFrequency and its
	// Lease's renew interval).
	HeartbeatEvery = 10 * time.Second
	// StatusReportEvery is how often a joined kubelet posts its Node's status when nothing
	// changed (the kubelet's nodeStatusReportFrequency); between reports its Lease says it is
	// alive. Posting every HeartbeatEvery instead made every Node an update event for every
	// watcher of Nodes every 10s.
	StatusReportEvery = 5 * time.Minute
	// consoleLimit is how much console output an instance keeps: GetConsoleOutput returns the
	// most recent 64 KiB.
	consoleLimit = 64 << 10
	// DefaultWorkers is how many instances a sync boots or keeps at once when
	// Options.Workers is zero.
	DefaultWorkers = 32
)

// Kubelets is the node side of the world's instances. Sync boots every running instance whose
// boot delay (the world's Timings.BootDelay) has passed with awsemu/boot's Booter, giving it the instance's
// facts and its cluster's join configuration, records the outcome and the console lines in the
// instance, and boots again, on the clock, the instances whose kubelet keeps retrying. With an
// API server, it also keeps the joined instances' Nodes Ready, reports the pods bound to them
// Running (boot.Registrar), stands in for the node agents that delete their own not-ready taint
// AgentReadyAfter after the Node turns Ready (removeAgentTaints), and deletes the Nodes of
// instances that are shutting down or gone, as the cloud node lifecycle controller does.
//
// Each instance is its own kubelet, as on EC2: a pass boots the due instances, heartbeats the
// joined ones, or runs their pods, up to Options.Workers at a time, so one slow API call
// delays only its own instance and a pass over hundreds of Nodes takes about as long as the
// slowest of them rather than their sum. Run runs the boots, heartbeats and pods in loops of
// their own, as a kubelet's node status and pod workers do not wait on each other, and the boot
// and pods loops start on an instance whenever a worker is free, without waiting for the others:
// a keep pass over hundreds of Nodes (heartbeats, then pods) took 2-12 s on a loaded machine, and
// pods bound meanwhile waited for it to end before they were reported Running. The timings (the boot delay,
// RegisterRetryEvery, HeartbeatEvery, AgentReadyAfter) are unchanged.
//
// A joined kubelet renews its Node's Lease every HeartbeatEvery and posts its Node's status when
// it changed or every StatusReportEvery, as kubelets do (the node lifecycle controller reads the
// Lease). Like the kubelet it renews the Lease from the copy it last wrote, reading it again only
// when that update fails.
//
// Kubelets decides nothing about joining (awsemu/boot does) and changes no AWS state beyond the
// instances' boot fields and console.
type Kubelets struct {
	state   *state.State
	clock   clock.WithTicker
	booter  *boot.Booter
	workers int
	// registrar and client are nil when no API server is configured.
	registrar *boot.Registrar
	client    client.Client
	// pods reads the pods bound to Nodes: Options.Pods, else client.
	pods client.Reader

	// bootMu, beatMu and podsMu make boot, heartbeat and pods passes one at a time each. mu
	// guards what the heartbeat and pods passes keep below, held to read it before and to write
	// it after a pass's parallel part. A boot touches only the world's instances (under the
	// state's lock).
	bootMu, beatMu, podsMu sync.Mutex
	mu                     sync.Mutex
	// heartbeats is when each joined instance last renewed its Lease and checked its Node's
	// status, and reported when it last posted that status, by instance id.
	heartbeats, reported map[string]time.Time
	// leases is the Lease each joined instance last wrote, by instance id.
	leases map[string]*coordinationv1.Lease
	// podsBusy are the instances whose agents and pods are being acted on now (runPods), and
	// podSlots holds one token per instance being acted on, at most Workers.
	podsBusy map[string]bool
	podSlots chan struct{}
	// bootsBusy are the instances being booted now (boot), by region and id, and bootSlots
	// holds one token per boot in progress, at most Workers.
	bootsBusy map[string]bool
	bootSlots chan struct{}
	// inflight are the goroutines booting instances or acting on their pods, which Run waits
	// for.
	inflight sync.WaitGroup
	// deleted are the instances whose Node was deleted while the instance ran; a kubelet does
	// not register it again until it restarts.
	deleted map[string]bool
	// readySince is when each joined instance's Node got its first heartbeat (turned Ready), and
	// agentsDone the instances whose Node the agent stand-ins are done with (removeAgentTaints).
	readySince map[string]time.Time
	agentsDone map[string]bool
}

// Options configure Kubelets.
type Options struct {
	// Client reaches the cluster's API server (uncached: a kubelet reads its own Node). Nil:
	// no API server, so instances boot and are admitted on their EKS access entries alone, and
	// the Nodes they register exist nowhere.
	Client client.Client
	// APIServer replaces what the Booter asks for kube-system/aws-auth and registers Nodes
	// with (boot.FakeAPIServer in tests); nil: a boot.Registrar over Client.
	APIServer boot.APIServer
	// Pods reads the pods bound to Nodes once a sync. A kubelet watches its pods rather than
	// listing them, so cmd/awsemu passes an informer cache of the pods that have a node; nil
	// means Client, one List of every pod per sync.
	Pods client.Reader
	// Workers is how many instances a sync boots or keeps at once; zero means
	// DefaultWorkers. The API server client's rate limit (QPS and burst) caps them all.
	Workers int
}

// New returns the kubelets of st's instances, on clk.
func New(st *state.State, clk clock.WithTicker, o Options) *Kubelets {
	k := &Kubelets{state: st, clock: clk, client: o.Client, pods: o.Pods, workers: o.Workers, heartbeats: map[string]time.Time{}, reported: map[string]time.Time{},
		leases: map[string]*coordinationv1.Lease{}, podsBusy: map[string]bool{}, bootsBusy: map[string]bool{}, deleted: map[string]bool{}, readySince: map[string]time.Time{}, agentsDone: map[string]bool{}}
	if k.workers <= 0 {
		k.workers = DefaultWorkers
	}
	k.podSlots = make(chan struct{}, k.workers)
	k.bootSlots = make(chan struct{}, k.workers)
	if k.pods == nil {
		k.pods = o.Client
	}
	api := o.APIServer
	if o.Client != nil {
		k.registrar = boot.NewRegistrar(o.Client, clk)
		if api == nil {
			api = k.registrar
		}
	}
	if api == nil {
		api = noAPIServer{}
	}
	k.booter = boot.NewBooter(clk, api)
	return k
}

// Run boots, heartbeats and runs pods every interval of the clock until ctx ends: three loops,
// so that a slow pass over hundreds of joined Nodes holds back neither the boots nor the pods,
// as no kubelet waits on another's. The pods loop does not wait for the instances it started on
// (startPods): each is started on again, with the pods bound since, once it is done. Errors, and
// boot and heartbeat passes that take longer than interval (the next one starts late), are
// logged. Run returns once every instance's work has ended.
func (k *Kubelets) Run(ctx context.Context, interval time.Duration) {
	var wg sync.WaitGroup
	wg.Go(func() { k.every(ctx, interval, "boot", k.startBoots) })
	if k.client != nil {
		wg.Go(func() { k.every(ctx, interval, "heartbeat", k.heartbeatPass) })
		wg.Go(func() { k.every(ctx, interval, "pods", k.startPods) })
	}
	wg.Wait()
	k.inflight.Wait()
}

// every runs step every interval until ctx ends. step returns how many instances it handled.
func (k *Kubelets) every(ctx context.Context, interval time.Duration, what string, step func(context.Context) (int, error)) {
	t := k.clock.NewTicker(interval)
	defer t.Stop()
	for {
		start := k.clock.Now()
		n, err := step(ctx)
		if err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Syncing the emulated kubelets", "step", what)
		}
		if took := k.clock.Since(start); took > interval {
			log.FromContext(ctx).Info("A kubelet pass took longer than its interval", "step", what, "instances", n,
				"took", took.String(), "interval", interval.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Sync boots the instances that are due, then, with an API server, heartbeats the joined
// instances' Nodes, deletes the Nodes of instances no longer running, and runs the joined
// instances' agents and pods. It returns every error met; the work that could be done was done.
func (k *Kubelets) Sync(ctx context.Context) error {
	_, err := k.bootPass(ctx)
	if k.client == nil {
		return err
	}
	_, beatErr := k.heartbeatPass(ctx)
	_, podsErr := k.podsPass(ctx)
	return errors.Join(err, beatErr, podsErr)
}

// bootPass boots the instances that are due and waits for them, one pass at a time.
func (k *Kubelets) bootPass(ctx context.Context) (int, error) {
	k.bootMu.Lock()
	defer k.bootMu.Unlock()
	return k.boot(ctx, true)
}

// startBoots starts booting the instances that are due and not being booted, without waiting
// for them (boot).
func (k *Kubelets) startBoots(ctx context.Context) (int, error) {
	k.bootMu.Lock()
	defer k.bootMu.Unlock()
	return k.boot(ctx, false)
}

// heartbeatPass heartbeats the joined instances' Nodes and deletes the Nodes of instances no
// longer running, one pass at a time.
func (k *Kubelets) heartbeatPass(ctx context.Context) (int, error) {
	k.beatMu.Lock()
	defer k.beatMu.Unlock()
	n, err := k.heartbeat(ctx)
	return n, errors.Join(err, k.deleteGone(ctx))
}

// podsPass runs the joined instances' agents and pods and waits for them, one pass at a time.
func (k *Kubelets) podsPass(ctx context.Context) (int, error) {
	k.podsMu.Lock()
	defer k.podsMu.Unlock()
	return k.runPods(ctx, true)
}

// startPods starts on the agents and pods of the joined instances that have something to do and
// are not being worked on, without waiting for them (runPods).
func (k *Kubelets) startPods(ctx context.Context) (int, error) {
	k.podsMu.Lock()
	defer k.podsMu.Unlock()
	return k.runPods(ctx, false)
}

// due is an instance to boot now.
type due struct {
	region, id string
	in         boot.Input
	// retry is true when the kubelet has already tried once: the bootstrap does not run again.
	retry bool
}

// boot boots the instances that are due and not being booted from an earlier call, k.workers at
// a time, outside the state's lock (they talk to the API server), records each outcome in its
// instance as soon as it ends, as one kubelet's would be, and returns how many it started. With
// wait it returns once all are done, with their errors; without, at once, each boot's error
// logged as it ends: an instance that comes due while others boot starts as soon as a worker is
// free, not after the slowest boot of a pass. With a pass waiting for all of its boots, the 430
// launches of a 1,000-pod scale-up took 7-10 s at the median from launch to Node instead of the
// 3 s of the e2e timings.
func (k *Kubelets) boot(ctx context.Context, wait bool) (int, error) {
	var todo []due
	k.state.View(func(w *state.World) {
		for _, rn := range state.SortedKeys(w.Regions) {
			r := w.Regions[rn]
			for _, id := range state.SortedKeys(r.Instances) {
				i := r.Instances[id]
				if i.State != state.InstanceRunning {
					continue
				}
				first := i.BootPhase == "" && w.Now.Sub(i.StateChangedAt) >= w.Timings.BootDelay
				again := i.BootRetryAt != nil && !w.Now.Before(*i.BootRetryAt)
				if first || again {
					todo = append(todo, due{region: rn, id: id, in: bootInput(w, r, i), retry: again})
				}
			}
		}
	})
	k.mu.Lock()
	todo = slices.DeleteFunc(todo, func(d due) bool { return k.bootsBusy[d.region+"/"+d.id] })
	for _, d := range todo {
		k.bootsBusy[d.region+"/"+d.id] = true
	}
	k.mu.Unlock()
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for n, d := range todo {
		k.startInSlot(ctx, k.bootSlots, &wg, func() error { return k.bootOne(ctx, d) }, func(err error) {
			errs[n] = err
			k.mu.Lock()
			delete(k.bootsBusy, d.region+"/"+d.id)
			k.mu.Unlock()
			if !wait && err != nil && ctx.Err() == nil {
				log.FromContext(ctx).Error(err, "Syncing the emulated kubelets", "step", "boot", "instance", d.id)
			}
		})
	}
	if !wait {
		return len(todo), nil
	}
	wg.Wait()
	return len(todo), errors.Join(errs...)
}

// startInSlot runs work on its own goroutine (in k.inflight, added to wg) once it holds one of
// slots, then done with work's error, or with ctx's when ctx ends first.
func (k *Kubelets) startInSlot(ctx context.Context, slots chan struct{}, wg *sync.WaitGroup, work func() error, done func(error)) {
	wg.Add(1)
	k.inflight.Go(func() {
		defer wg.Done()
		var err error
		select {
		case slots <- struct{}{}:
			err = work()
			<-slots
		case <-ctx.Done():
			err = ctx.Err()
		}
		done(err)
	})
}

// bootOne boots one due instance and records the outcome in it.
func (k *Kubelets) bootOne(ctx context.Context, d due) error {
	out := k.booter.Boot(ctx, d.in)
	_ = k.state.Update(func(w *state.World) error {
		if i := w.Regions[d.region].Instances[d.id]; i != nil && i.State == state.InstanceRunning {
			record(w, i, out, d.retry)
		}
		return nil
	})
	if out.Err != nil {
		return fmt.Errorf("booting %s, %w", d.id, out.Err)
	}
	return nil
}

// inParallel calls fn(0) .. fn(n-1), at most workers at a time, and returns when all have
// returned. fn must not touch what another call touches unguarded.
func inParallel(n, workers int, fn func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// record writes a boot's outcome into its instance.
func record(w *state.World, i *state.Instance, out boot.Outcome, retry bool) {
	console := out.Console
	if retry && out.Attempt <= len(console) {
		console = console[out.Attempt:]
	}
	i.Console = appendConsole(i.Console, console)
	i.BootReason, i.BootMessage, i.BootRetryAt = out.Reason, out.Message, nil
	if out.Joined {
		i.BootPhase, i.NodeName = state.BootJoined, out.Node.Name
		return
	}
	i.BootPhase = state.BootNotJoined
	if out.Retry {
		at := w.Now.Add(RegisterRetryEvery)
		i.BootRetryAt = &at
	}
}

// appendConsole appends lines and keeps the most recent consoleLimit bytes, whole lines only.
func appendConsole(console, lines []string) []string {
	console = append(console, lines...)
	size := 0
	for n := len(console) - 1; n >= 0; n-- {
		size += len(console[n]) + 1
		if size > consoleLimit {
			return append([]string(nil), console[n+1:]...)
		}
	}
	return console
}

// bootInput is what the instance knows about itself and the cluster it boots in.
func bootInput(w *state.World, r *state.Region, i *state.Instance) boot.Input {
	in := boot.Instance{
		ID: i.ID, Region: i.Region, Zone: i.Zone, PrivateDNSName: i.PrivateDNSName, PrivateIP: i.PrivateIP,
		InstanceType: i.InstanceType, AMIFamily: state.FamilyCustom, LaunchTime: i.LaunchTime,
	}
	if it, ok := w.Catalog.Type(i.InstanceType); ok {
		in.Architecture = "amd64"
		if it.Architecture == catalog.ArchARM64 {
			in.Architecture = "arm64"
		}
		in.VCPU, in.MemoryMiB, in.ENIMaxPods = int64(it.VCPU), it.MemoryMiB, it.MaxPods()
		if it.LocalStorage != nil {
			in.InstanceStoreGB = it.LocalStorage.TotalGB()
		}
	}
	if img := r.Images[i.ImageID]; img != nil && img.Family != "" {
		in.AMIFamily = img.Family
	}
	if vpc := r.VPCs[i.VPCID]; vpc != nil {
		in.VPCCIDR = vpc.CIDR
	}
	if lt := r.LaunchTemplates[i.LaunchTemplateID]; lt != nil {
		in.RootVolumeGiB = int64(lt.Data.RootVolumeSizeGiB)
	}
	if raw, err := base64.StdEncoding.DecodeString(i.UserData); err == nil {
		in.UserData = raw
	} else {
		in.UserData = []byte(i.UserData)
	}
	for _, p := range w.IAM.InstanceProfiles {
		if p.ARN == i.InstanceProfileARN && i.InstanceProfileARN != "" {
			if role := w.IAM.Roles[p.RoleName]; role != nil {
				in.RoleARN = role.ARN
			}
		}
	}
	return boot.Input{Instance: in, Cluster: clusterOf(r, i)}
}

// clusterOf is the cluster an instance boots in: the one its kubernetes.io/cluster/NAME tag
// names, else the region's first by name. With no cluster in the region the instance gets an
// empty one, so its bootstrap's DescribeCluster fails.
func clusterOf(r *state.Region, i *state.Instance) boot.Cluster {
	var c *state.Cluster
	for key := range i.Tags {
		if name, ok := strings.CutPrefix(key, "kubernetes.io/cluster/"); ok && r.Clusters[name] != nil {
			c = r.Clusters[name]
		}
	}
	if names := state.SortedKeys(r.Clusters); c == nil && len(names) > 0 {
		c = r.Clusters[names[0]]
	}
	if c == nil {
		return boot.Cluster{}
	}
	out := boot.Cluster{
		Name: c.Name, Endpoint: c.Endpoint, CertificateAuthority: c.CertificateData, ServiceCIDR: c.ServiceIPv4CIDR,
		KubernetesVersion: c.Version, AuthenticationMode: c.AuthenticationMode,
	}
	for _, p := range state.SortedKeys(c.AccessEntries) {
		e := c.AccessEntries[p]
		out.AccessEntries = append(out.AccessEntries, boot.AccessEntry{
			PrincipalARN: e.PrincipalARN, Type: e.Type, Username: e.Username, KubernetesGroups: e.KubernetesGroups,
		})
	}
	return out
}

// joined is a joined instance: its id, its Node's name and its private IP.
type joined struct {
	id, node, ip string
}

// joinedInstances are the running instances whose kubelet joined, by region and id.
func (k *Kubelets) joinedInstances() []joined {
	var out []joined
	k.state.View(func(w *state.World) {
		for _, rn := range state.SortedKeys(w.Regions) {
			r := w.Regions[rn]
			for _, id := range state.SortedKeys(r.Instances) {
				if i := r.Instances[id]; i.State == state.InstanceRunning && i.BootPhase == state.BootJoined {
					out = append(out, joined{id: id, node: i.NodeName, ip: i.PrivateIP})
				}
			}
		}
	})
	return out
}

// heartbeat renews the Leases and checks the statuses that are due, k.workers instances at a
// time, and returns how many it did. What is kept about each instance is read before and written
// after the parallel part, which touches no map of k's.
func (k *Kubelets) heartbeat(ctx context.Context) (int, error) {
	instances := k.joinedInstances()
	now := k.clock.Now()
	live := map[string]bool{}
	var todo []*beat
	k.mu.Lock()
	for _, in := range instances {
		live[in.id] = true
		if last, beaten := k.heartbeats[in.id]; k.deleted[in.id] || beaten && now.Sub(last) < HeartbeatEvery {
			continue
		}
		lastReport, reported := k.reported[in.id]
		todo = append(todo, &beat{joined: in, report: !reported || now.Sub(lastReport) >= StatusReportEvery, lease: k.leases[in.id]})
	}
	k.mu.Unlock()
	inParallel(len(todo), k.workers, func(i int) { k.beatOne(ctx, todo[i]) })
	k.mu.Lock()
	defer k.mu.Unlock()
	var errs []error
	for _, b := range todo {
		errs = append(errs, b.err)
		k.leases[b.id] = b.lease
		if b.gone {
			k.deleted[b.id] = true
			continue
		}
		if b.posted {
			k.reported[b.id] = now
		}
		if b.beaten {
			k.heartbeats[b.id] = now
			if _, ok := k.readySince[b.id]; !ok {
				k.readySince[b.id] = now
			}
		}
	}
	k.forget(live)
	return len(todo), errors.Join(errs...)
}

// beat is one joined instance's share of a heartbeat pass: what is due, then what came of it.
type beat struct {
	joined
	// report is whether the status is posted even unchanged; lease is the Lease the instance
	// last wrote (nil: read it), then the one this heartbeat wrote.
	report bool
	lease  *coordinationv1.Lease

	// gone is true when the heartbeat found the Node deleted, beaten when the heartbeat was
	// done, posted when it posted the status; err is what failed.
	gone, beaten, posted bool
	err                  error
}

// beatOne is one kubelet's heartbeat: its Lease renewed, then its status posted when changed or
// a report is due.
func (k *Kubelets) beatOne(ctx context.Context, b *beat) {
	var err error
	b.lease, err = k.registrar.RenewLease(ctx, b.node, b.lease)
	if err == nil {
		b.posted, err = k.registrar.Heartbeat(ctx, b.node, b.report)
	}
	switch {
	case errors.Is(err, boot.ErrNodeGone):
		b.gone = true
	case err != nil:
		b.err = err
	default:
		b.beaten = true
	}
}

// runPods runs the agent stand-ins that are due and reports the pods bound to the joined
// instances' Nodes Running (or finishes their deletion), k.workers instances at a time, and
// returns how many instances it started on. An instance whose pods are being acted on from an
// earlier call is left to it. With wait it returns once all it started are done, with their
// errors; without, at once, each instance's errors logged as it ends: pods bound while slow API
// calls hold some instances do not wait for those to end, as no kubelet waits on another's.
func (k *Kubelets) runPods(ctx context.Context, wait bool) (int, error) {
	instances := k.joinedInstances()
	if len(instances) == 0 {
		return 0, nil
	}
	bound, err := podsToRun(ctx, k.pods)
	if err != nil {
		return 0, err
	}
	now := k.clock.Now()
	var todo []*podsOf
	k.mu.Lock()
	for _, in := range instances {
		if k.deleted[in.id] || k.podsBusy[in.id] {
			continue
		}
		// The agents start once the Node has been Ready for a while: after its first heartbeat.
		since, ready := k.readySince[in.id]
		p := &podsOf{joined: in, pods: bound[in.node], agents: ready && !k.agentsDone[in.id] && now.Sub(since) >= AgentReadyAfter}
		if p.agents || len(p.pods) > 0 {
			k.podsBusy[in.id] = true
			todo = append(todo, p)
		}
	}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range todo {
		k.startInSlot(ctx, k.podSlots, &wg, func() error { k.podsOne(ctx, p); return p.err }, func(err error) {
			p.err = err
			k.podsDone(p)
			if !wait && err != nil && ctx.Err() == nil {
				log.FromContext(ctx).Error(err, "Syncing the emulated kubelets", "step", "pods", "instance", p.id)
			}
		})
	}
	if !wait {
		return len(todo), nil
	}
	wg.Wait()
	var errs []error
	for _, p := range todo {
		errs = append(errs, p.err)
	}
	return len(todo), errors.Join(errs...)
}

// podsDone records what came of one instance's pods work and frees the instance for the next.
func (k *Kubelets) podsDone(p *podsOf) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.podsBusy, p.id)
	if _, live := k.readySince[p.id]; p.agents && live {
		k.agentsDone[p.id] = p.agentsFinished
	}
}

// podsToRun reads the pods bound to a node that a kubelet has to act on, by node name: those
// not yet Running (nor finished), and those being deleted. One read for all the kubelets of a
// pass, where a read per node would cost a request per node per second; only those pods are
// copied out of the cache, as a pass runs every second and most bound pods already run.
func podsToRun(ctx context.Context, r client.Reader) (map[string][]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods, %w", err)
	}
	out := map[string][]corev1.Pod{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		switch {
		case pod.Spec.NodeName == "":
		case pod.DeletionTimestamp == nil && (pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed):
		default:
			out[pod.Spec.NodeName] = append(out[pod.Spec.NodeName], *pod.DeepCopy())
		}
	}
	return out, nil
}

// podsOf is one joined instance's share of a pods pass: what is due, then what came of it.
type podsOf struct {
	joined
	// agents is whether the agent stand-ins are due (once AgentReadyAfter has passed since the
	// Node turned Ready, until done); pods are the pods bound to the Node that need its kubelet.
	agents bool
	pods   []corev1.Pod

	// agentsFinished is true when the agents are done with the Node; err joins what failed.
	agentsFinished bool
	err            error
}

// podsOne is one kubelet's agents, when due, then its pods.
func (k *Kubelets) podsOne(ctx context.Context, p *podsOf) {
	var errs []error
	if p.agents {
		done, err := removeAgentTaints(ctx, k.client, p.node)
		p.agentsFinished = done
		errs = append(errs, err)
	}
	if _, err := k.registrar.RunPodsOf(ctx, p.pods, p.ip); err != nil {
		errs = append(errs, err)
	}
	p.err = errors.Join(errs...)
}

// forget drops what is kept about instances that are no longer live joined instances.
func (k *Kubelets) forget(live map[string]bool) {
	for id := range k.heartbeats {
		if !live[id] {
			delete(k.heartbeats, id)
			delete(k.reported, id)
		}
	}
	for id := range k.leases {
		if !live[id] {
			delete(k.leases, id)
		}
	}
	for id := range k.deleted {
		if !live[id] {
			delete(k.deleted, id)
		}
	}
	for id := range k.readySince {
		if !live[id] {
			delete(k.readySince, id)
			delete(k.agentsDone, id)
		}
	}
}

// deleteGone deletes the Nodes of instances that are shutting down or terminated.
func (k *Kubelets) deleteGone(ctx context.Context) error {
	gone := map[string]bool{}
	k.state.View(func(w *state.World) {
		for _, r := range w.Regions {
			for id, i := range r.Instances {
				if i.State == state.InstanceShuttingDown || i.State == state.InstanceTerminated {
					gone[boot.ProviderID(boot.Instance{ID: id, Zone: i.Zone})] = true
				}
			}
		}
	})
	if len(gone) == 0 {
		return nil
	}
	nodes := &corev1.NodeList{}
	if err := k.client.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing nodes, %w", err)
	}
	var errs []error
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if gone[n.Spec.ProviderID] && n.DeletionTimestamp == nil {
			if err := k.client.Delete(ctx, n); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting node %s of a terminated instance, %w", n.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// noAPIServer is the cluster of an emulator run without an API server: there is no aws-auth
// ConfigMap, and registration succeeds without a Node appearing anywhere.
type noAPIServer struct{}

func (noAPIServer) AWSAuth(context.Context) (string, bool, error) { return "", false, nil }

func (noAPIServer) RegisterNode(context.Context, *corev1.Node) error { return nil }
