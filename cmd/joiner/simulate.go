package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/operator"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
	"github.com/joinerhq/joiner/pkg/simulate"
)

func newSimulateCommand() *cobra.Command {
	var o simulate.Options
	var output, kubeconfig string
	var fromCluster bool
	var sched schedulingFlags
	cmd := &cobra.Command{
		Use:   "simulate -f FILE... | --workload FILE | --cluster",
		Short: "Simulate scheduling pending pods onto new nodes and print the plan",
		Long: `simulate runs Joiner's scheduling simulation without a cluster or a cloud.

-f reads multi-document YAML (NodePool, EC2NodeClass, Pod, Deployment, ReplicaSet, StatefulSet,
Job, DaemonSet, Node for existing capacity; kinds that make no pods, such as ConfigMap, are
skipped). -f may be repeated, and files after it are read too, so -f config/samples/*.yaml
works. Instance types and prices are the built-in catalogue's for --region (spot prices as of
now), under each NodePool's EC2NodeClass, or --instance-types, a file in the shared/bench schema.

--workload reads a benchmark workload file (the schema of shared/bench/README.md: instance
types, NodePools and pod groups) instead.

--cluster reads the cluster of --kubeconfig (or $KUBECONFIG) as the controller would now: the
pending pods kube-scheduler found no node for, NodePools, EC2NodeClasses, nodes, in-flight
NodeClaims and DaemonSets, with instance types and prices from AWS in the cluster's region (the
default credential chain; AWS_ENDPOINT_URL overrides the endpoints) or from --instance-types, and
prints what Joiner would launch now and why the rest cannot be placed. ` + regionHelp("--region") + `
Only when none names a region is --region's default used.

Each new node costs its instance plus, apart, a per-node cost: the EBS volumes of its
EC2NodeClass (blockDeviceMappings, or the AMI family's default root volume, at us-east-1 list
prices: gp3 $0.08 per GiB-month, 730 hours a month) and --node-cost, dollars per hour for
anything billed per host. A monitoring agent licensed at $15 per host per month is
--node-cost 0.0205 (15/730). The plan minimises both together.

-o table prints one line per new NodeClaim, the totals, and why each unschedulable pod failed per
NodePool; -o json prints the fields the benchmarks compare (podsScheduled, podsFailed, nodes,
totalHourlyPrice, instanceTypesChosen, schedulingSeconds) and totalHourlyNodeCost and
totalHourlyCost.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "table" {
				return fmt.Errorf("-o %s is not an output format: use json or table", output)
			}
			if len(args) > 0 && len(o.Files) == 0 {
				return fmt.Errorf("unexpected arguments %v: name manifests with -f", args)
			}
			if o.NodeCost < 0 {
				return fmt.Errorf("--node-cost %v is negative: give dollars per node per hour, 0 or more", o.NodeCost)
			}
			var err error
			if o.Scheduling, err = sched.settings(); err != nil {
				return err
			}
			o.Files = append(o.Files, args...)
			o.Now = time.Now()
			var in *scheduling.Input
			var costs []simulate.NodeCost
			var excluded []scheduling.Reason
			if fromCluster {
				if len(o.Files) > 0 || o.WorkloadFile != "" {
					return fmt.Errorf("--cluster excludes -f and --workload: pass one")
				}
				in, costs, excluded, err = simulateCluster(cmd, kubeconfig, o)
			} else {
				in, costs, err = simulate.Input(o)
			}
			if err != nil {
				return err
			}
			start := time.Now()
			plan, err := scheduling.Solve(in)
			if err != nil {
				return fmt.Errorf("simulating, %w", err)
			}
			summary := workload.Summarize(plan, time.Since(start).Seconds())
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(summary)
			}
			if err := printPlanTable(cmd.OutOrStdout(), plan, summary, costs); err != nil {
				return err
			}
			for _, r := range excluded {
				fmt.Fprintf(cmd.OutOrStdout(), "NodePool %s cannot launch now: %s: %s\n", r.NodePool, r.Code, r.Message)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromCluster, "cluster", false, "read the pending pods, NodePools, nodes and DaemonSets of the --kubeconfig cluster, and instance types from AWS in --region")
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "with --cluster: kubeconfig of the cluster; empty: $KUBECONFIG, then the in-cluster service account")
	cmd.Flags().StringVar(&o.WorkloadFile, "workload", "", "benchmark workload file (shared/bench schema)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringSliceVarP(&o.Files, "filename", "f", nil, "Kubernetes manifests to simulate (multi-document YAML); repeatable")
	cmd.Flags().StringVar(&o.InstanceTypesFile, "instance-types", "", "instance-type catalogue for -f (a file in the shared/bench schema); default: the built-in catalogue of --region")
	cmd.Flags().StringVar(&o.Region, "region", simulate.DefaultRegion, "region of the built-in catalogue, or with --cluster the cluster's AWS region (default with --cluster: AWS_REGION, AWS_DEFAULT_REGION, the shared config's profile, else the cluster's topology.kubernetes.io/region label)")
	cmd.Flags().Float64Var(&o.NodeCost, "node-cost", 0, "dollars per hour every new node costs beyond its instance and volumes (per-host licences: $15/host/month is 0.0205)")
	sched.add(cmd.Flags())
	return cmd
}

// printPlanTable prints one line per NodeClaim, the totals, each NodePool's per-node cost, and
// why each unschedulable pod failed.
func printPlanTable(out io.Writer, plan *scheduling.Plan, s workload.Summary, costs []simulate.NodeCost) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODECLAIM\tNODEPOOL\tINSTANCE TYPE\tZONE\tCAPACITY TYPE\tPODS\tINSTANCE $/H\tNODE COST $/H\tOPTIONS")
	for i := range plan.NodeClaims {
		nc := &plan.NodeClaims[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%.4f\t%.4f\t%d\n", nc.Name, nc.NodePool, nc.Launch.InstanceType, nc.Launch.Zone,
			nc.Launch.CapacityType, len(nc.Pods), nc.Launch.Price, nc.NodeCost, len(nc.InstanceTypes))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("printing plan, %w", err)
	}
	fmt.Fprintf(out, "\n%d pods scheduled (%d on existing nodes), %d unschedulable, %d new nodes, $%.4f/h instances + $%.4f/h per-node costs = $%.4f/h, %.3fs\n",
		s.PodsScheduled, s.PodsOnExistingNodes, s.PodsFailed, s.Nodes, s.TotalHourlyPrice, s.TotalHourlyNodeCost, s.TotalHourlyCost, s.SchedulingSeconds)
	for _, c := range costs {
		if c.Total() == 0 {
			continue
		}
		fmt.Fprintf(out, "per-node cost of NodePool %s: $%.4f/h", c.NodePool, c.Total())
		if c.VolumesText != "" {
			fmt.Fprintf(out, " = volumes %s $%.4f/h", c.VolumesText, c.Volumes)
		}
		if c.PerNode > 0 {
			fmt.Fprintf(out, " + --node-cost $%.4f/h", c.PerNode)
		}
		fmt.Fprintln(out)
	}
	if len(s.InstanceTypesChosen) > 0 {
		fmt.Fprintln(out, "instance types:")
	}
	for _, name := range slices.Sorted(maps.Keys(s.InstanceTypesChosen)) {
		fmt.Fprintf(out, "  %s x%d\n", name, s.InstanceTypesChosen[name])
	}
	for i := range plan.NodeClaims {
		if nc := &plan.NodeClaims[i]; nc.MinValuesRelaxed {
			fmt.Fprintf(out, "%s: minValues relaxed (--min-values-policy BestEffort), its requirements keep %s\n", nc.Name, minValuesText(nc.Requirements))
		}
	}
	for _, u := range plan.Unschedulable {
		fmt.Fprintf(out, "unschedulable %s/%s:\n", u.Pod.Namespace, u.Pod.Name)
		for _, r := range u.Reasons {
			pool := r.NodePool
			if pool == "" {
				pool = "(any)"
			}
			fmt.Fprintf(out, "  %s: %s: %s\n", pool, r.Code, r.Message)
		}
	}
	return nil
}

// simulateCluster reads the input from the cluster of kubeconfig and from AWS (or the
// --instance-types file) in o.Region.
func simulateCluster(cmd *cobra.Command, kubeconfig string, o simulate.Options) (*scheduling.Input, []simulate.NodeCost, []scheduling.Reason, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, nil, nil, err
	}
	scheme, err := operator.NewScheme()
	if err != nil {
		return nil, nil, nil, err
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connecting to the cluster, %w", err)
	}
	if o.InstanceTypesFile == "" {
		// --region's default is the built-in catalogue's; the cluster's region is found as
		// explain and doctor find it, the default kept only when nothing names one.
		region, err := commandRegion(cmd, "region", kube, "")
		if err != nil {
			return nil, nil, nil, err
		}
		if region == "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "Region %s (--region's default: no NodeClaim or node of the cluster has a %s label)\n", o.Region, corev1.LabelTopologyRegion)
		} else {
			o.Region = region
		}
	}
	cloud, err := explainCloud(cmd.Context(), kube, o.InstanceTypesFile, o.Region)
	if err != nil {
		return nil, nil, nil, err
	}
	return simulate.FromCluster(cmd.Context(), kube, cloud, o.NodeCost, o.Scheduling)
}

// minValuesText lists the requirements that carry minValues, with them.
func minValuesText(reqs []v1.NodeSelectorRequirementWithMinValues) string {
	var parts []string
	for _, r := range reqs {
		if r.MinValues != nil {
			parts = append(parts, fmt.Sprintf("%s minValues %d", r.Key, *r.MinValues))
		}
	}
	if len(parts) == 0 {
		return "no minValues"
	}
	return strings.Join(parts, ", ")
}
