package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/manifest"
	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/manifests"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

func newSimulateCommand() *cobra.Command {
	var workloadFile, output, manifestFile, catalogue string
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate scheduling pending pods onto new nodes and print the plan",
		Long: `simulate runs Joiner's scheduling simulation without a cluster or a cloud.

-f reads multi-document YAML (NodePool, EC2NodeClass, Pod, Deployment, ReplicaSet, StatefulSet,
Job, DaemonSet, Node for existing capacity) and needs --instance-types, a file in the
shared/bench schema whose instanceTypes are the catalogue (there is no built-in catalogue yet).

--workload reads a benchmark workload file (the schema of shared/bench/README.md: instance
types, NodePools and pod groups) instead.

-o table prints one line per new NodeClaim, the totals, and why each unschedulable pod failed per
NodePool; -o json prints the fields the benchmarks compare (podsScheduled, podsFailed, nodes,
totalHourlyPrice, instanceTypesChosen, schedulingSeconds).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "json" && output != "table" {
				return fmt.Errorf("-o %s is not an output format: use json or table", output)
			}
			in, err := simulateInput(manifestFile, catalogue, workloadFile)
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
			return printPlanTable(cmd.OutOrStdout(), plan, summary)
		},
	}
	cmd.Flags().StringVar(&workloadFile, "workload", "", "benchmark workload file (shared/bench schema)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.Flags().StringVarP(&manifestFile, "filename", "f", "", "Kubernetes manifests to simulate (multi-document YAML)")
	cmd.Flags().StringVar(&catalogue, "instance-types", "", "instance-type catalogue for -f (a file in the shared/bench schema)")
	return cmd
}

// simulateInput reads either manifests with a catalogue, or a workload file.
func simulateInput(manifestFile, catalogueFile, workloadFile string) (*scheduling.Input, error) {
	switch {
	case manifestFile != "" && workloadFile != "":
		return nil, errors.New("-f and --workload exclude each other: pass one")
	case workloadFile != "":
		wl, err := workload.Load(workloadFile)
		if err != nil {
			return nil, err
		}
		in, err := wl.Input()
		if err != nil {
			return nil, fmt.Errorf("reading workload %s, %w", workloadFile, err)
		}
		return in, nil
	case manifestFile == "":
		return nil, errors.New("pass -f with manifests (and --instance-types), or --workload with a file in the shared/bench schema")
	case catalogueFile == "":
		return nil, errors.New("-f needs --instance-types: there is no built-in catalogue yet; pass a file in the shared/bench schema")
	}
	cat, err := workload.Load(catalogueFile)
	if err != nil {
		return nil, err
	}
	fh, err := os.Open(manifestFile)
	if err != nil {
		return nil, fmt.Errorf("opening manifests, %w", err)
	}
	defer func() { _ = fh.Close() }()
	objs, err := manifest.Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("decoding %s, %w", manifestFile, err)
	}
	return manifests.Input(objs, cat.Catalogue())
}

// printPlanTable prints one line per NodeClaim, the totals, and why each unschedulable pod failed.
func printPlanTable(out io.Writer, plan *scheduling.Plan, s workload.Summary) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODECLAIM\tNODEPOOL\tINSTANCE TYPE\tZONE\tCAPACITY TYPE\tPODS\t$/H\tOPTIONS")
	for i := range plan.NodeClaims {
		nc := &plan.NodeClaims[i]
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%.4f\t%d\n", nc.Name, nc.NodePool, nc.Launch.InstanceType, nc.Launch.Zone,
			nc.Launch.CapacityType, len(nc.Pods), nc.Launch.Price, len(nc.InstanceTypes))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("printing plan, %w", err)
	}
	fmt.Fprintf(out, "\n%d pods scheduled (%d on existing nodes), %d unschedulable, %d new nodes, $%.4f/h, %.3fs\n",
		s.PodsScheduled, s.PodsOnExistingNodes, s.PodsFailed, s.Nodes, s.TotalHourlyPrice, s.SchedulingSeconds)
	if len(s.InstanceTypesChosen) > 0 {
		fmt.Fprintln(out, "instance types:")
	}
	for _, name := range slices.Sorted(maps.Keys(s.InstanceTypesChosen)) {
		fmt.Fprintf(out, "  %s x%d\n", name, s.InstanceTypesChosen[name])
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
