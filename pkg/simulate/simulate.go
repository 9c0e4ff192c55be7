package simulate

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/aws/instancetype"
	"github.com/joinerhq/joiner/pkg/aws/launchtemplate"
	"github.com/joinerhq/joiner/pkg/aws/pricing"
	"github.com/joinerhq/joiner/pkg/catalog"
	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/manifests"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
	"github.com/joinerhq/joiner/pkg/schedulinginput"
)

// DefaultRegion is the region of the built-in catalogue when none is given.
const DefaultRegion = "us-west-2"

// Options say what to simulate.
type Options struct {
	// Files are manifests (multi-document YAML); WorkloadFile a shared/bench workload instead.
	Files        []string
	WorkloadFile string
	// InstanceTypesFile is a shared/bench-schema file whose instanceTypes are the catalogue for
	// Files; empty means the built-in catalogue of Region (DefaultRegion when empty) at Now.
	InstanceTypesFile string
	Region            string
	Now               time.Time
	// NodeCost is what every new node costs per hour beyond its instance and volumes, in
	// dollars: a per-host licence of a monitoring or security agent, for example.
	NodeCost float64
	// Scheduling are the scheduling policies and default spreads (--min-values-policy,
	// --preference-policy, --scheduler-config) to simulate with.
	Scheduling scheduling.Settings
}

// NodeCost is what one new node of a NodePool costs per hour beyond its instance, by part.
type NodeCost struct {
	NodePool string
	// Volumes is the price of the EBS volumes of the NodePool's EC2NodeClass (its
	// blockDeviceMappings, or the AMI family's defaults), and VolumesText describes them.
	Volumes     float64
	VolumesText string
	// PerNode is Options.NodeCost.
	PerNode float64
}

// Total is the node's cost beyond its instance.
func (c NodeCost) Total() float64 { return c.Volumes + c.PerNode }

// Input reads what o names into a scheduling input, with each NodePool's node cost (also set in
// the input's NodeCosts).
func Input(o Options) (*scheduling.Input, []NodeCost, error) {
	switch {
	case len(o.Files) > 0 && o.WorkloadFile != "":
		return nil, nil, errors.New("-f and --workload exclude each other: pass one")
	case o.WorkloadFile != "":
		return workloadInput(o)
	case len(o.Files) == 0:
		return nil, nil, errors.New("pass -f with manifests, or --workload with a file in the shared/bench schema")
	}
	var docs []*unstructured.Unstructured
	for _, f := range o.Files {
		d, err := decodeFile(f)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, d...)
	}
	objects, err := manifest.ObjectsFrom(docs)
	if err != nil {
		return nil, nil, err
	}
	classes := map[string]*awsv1.EC2NodeClass{}
	for _, nc := range objects.NodeClasses {
		classes[nc.Name] = nc
	}
	var types []*scheduling.InstanceType
	var perPool map[string][]string
	if o.InstanceTypesFile != "" {
		cat, err := workload.Load(o.InstanceTypesFile)
		if err != nil {
			return nil, nil, err
		}
		types = cat.Catalogue()
	} else if types, perPool, err = catalogueTypes(o, objects.NodePools, classes); err != nil {
		return nil, nil, err
	}
	var workloads *scheduling.DefaultSpread
	if len(o.Scheduling.DefaultConstraints) > 0 {
		if workloads, err = manifestWorkloads(objects); err != nil {
			return nil, nil, err
		}
	}
	in, err := manifests.FromObjects(objects, types)
	if err != nil {
		return nil, nil, err
	}
	o.Scheduling.Apply(in, workloads)
	// Each NodePool launches only its own node class's types.
	for i, np := range in.NodePools {
		if names, ok := perPool[np.Name]; ok && len(names) < len(types) {
			np = np.DeepCopy()
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements,
				v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: names})
			in.NodePools[i] = np
		}
	}
	costs, err := nodeCosts(o, in.NodePools, classes)
	if err != nil {
		return nil, nil, err
	}
	setCosts(in, costs)
	return in, costs, nil
}

func decodeFile(name string) ([]*unstructured.Unstructured, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening manifests, %w", err)
	}
	defer func() { _ = fh.Close() }()
	docs, err := manifest.Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("decoding %s, %w", name, err)
	}
	return docs, nil
}

func workloadInput(o Options) (*scheduling.Input, []NodeCost, error) {
	wl, err := workload.Load(o.WorkloadFile)
	if err != nil {
		return nil, nil, err
	}
	in, err := wl.Input()
	if err != nil {
		return nil, nil, fmt.Errorf("reading workload %s, %w", o.WorkloadFile, err)
	}
	// A workload holds no Services or controllers: default spreads select nothing there.
	o.Scheduling.Apply(in, nil)
	// A workload has no node classes: only the per-node cost applies.
	var costs []NodeCost
	for _, np := range in.NodePools {
		costs = append(costs, NodeCost{NodePool: np.Name, PerNode: o.NodeCost})
	}
	setCosts(in, costs)
	return in, costs, nil
}

func setCosts(in *scheduling.Input, costs []NodeCost) {
	in.NodeCosts = map[string]float64{}
	for _, c := range costs {
		in.NodeCosts[c.NodePool] = c.Total()
	}
}

// nodeClassOf returns the NodePool's EC2NodeClass from the manifests, or, when they do not hold
// it, one with every default (AL2023, a 20Gi gp3 root volume).
func nodeClassOf(np *v1.NodePool, classes map[string]*awsv1.EC2NodeClass) *awsv1.EC2NodeClass {
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		if nc, ok := classes[ref.Name]; ok {
			return nc
		}
	}
	return &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: awsv1.AliasFamilyAL2023 + "@latest"}}}}
}

// catalogueTypes lists the built-in catalogue's types of o.Region under each NodePool's node
// class: the union by name (the first node class's reading of a type wins), and each pool's names.
func catalogueTypes(o Options, pools []*v1.NodePool, classes map[string]*awsv1.EC2NodeClass) ([]*scheduling.InstanceType, map[string][]string, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, nil, err
	}
	region := o.Region
	if region == "" {
		region = DefaultRegion
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	var out []*scheduling.InstanceType
	seen := map[string]bool{}
	perPool := map[string][]string{}
	for _, np := range pools {
		its, err := instancetype.FromCatalog(cat, region, nodeClassOf(np, classes), now, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("listing instance types of NodePool %s, %w", np.Name, err)
		}
		for _, it := range its {
			perPool[np.Name] = append(perPool[np.Name], it.Name)
			if !seen[it.Name] {
				seen[it.Name] = true
				out = append(out, schedulinginput.SchedulingType(it))
			}
		}
	}
	return out, perPool, nil
}

// nodeCosts prices each NodePool's node: its node class's volumes plus o.NodeCost.
func nodeCosts(o Options, pools []*v1.NodePool, classes map[string]*awsv1.EC2NodeClass) ([]NodeCost, error) {
	var out []NodeCost
	for _, np := range pools {
		mappings := launchtemplate.BlockDeviceMappings(nodeClassOf(np, classes))
		volumes, err := pricing.VolumesHourly(mappings)
		if err != nil {
			return nil, fmt.Errorf("pricing the volumes of NodePool %s, %w", np.Name, err)
		}
		out = append(out, NodeCost{NodePool: np.Name, Volumes: volumes, VolumesText: describeVolumes(mappings), PerNode: o.NodeCost})
	}
	slices.SortFunc(out, func(a, b NodeCost) int { return strings.Compare(a.NodePool, b.NodePool) })
	return out, nil
}

func describeVolumes(mappings []awsv1.BlockDeviceMapping) string {
	var parts []string
	for _, m := range mappings {
		if m.EBS == nil {
			continue
		}
		typ := pricing.DefaultVolumeType
		if m.EBS.VolumeType != nil {
			typ = *m.EBS.VolumeType
		}
		size := "snapshot size"
		if m.EBS.VolumeSize != nil {
			size = m.EBS.VolumeSize.String()
		}
		parts = append(parts, size+" "+typ)
	}
	return strings.Join(parts, " + ")
}
