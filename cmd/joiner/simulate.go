package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/joinerhq/joiner/pkg/scheduling"
	"github.com/joinerhq/joiner/pkg/scheduling/workload"
)

func newSimulateCommand() *cobra.Command {
	var workloadFile, output, manifests string
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Simulate scheduling pending pods onto new nodes and print the plan",
		Long: `simulate runs Joiner's scheduling simulation without a cluster or a cloud.

--workload reads a benchmark workload file (the schema of shared/bench/README.md: instance
types, NodePools and pod groups) and prints the plan; -o json prints the fields the benchmarks
compare (podsScheduled, podsFailed, nodes, totalHourlyPrice, instanceTypesChosen,
schedulingSeconds). Reading Kubernetes manifests with -f is not implemented yet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if manifests != "" {
				return errors.New("-f is not implemented yet: use --workload with a file in the shared/bench schema")
			}
			if workloadFile == "" {
				return errors.New("--workload is required: a workload file in the shared/bench schema")
			}
			if output != "json" && output != "table" {
				return fmt.Errorf("-o %s is not an output format: use json or table", output)
			}
			wl, err := workload.Load(workloadFile)
			if err != nil {
				return err
			}
			in, err := wl.Input()
			if err != nil {
				return fmt.Errorf("reading workload %s, %w", workloadFile, err)
			}
			start := time.Now()
			plan, err := scheduling.Solve(in)
			if err != nil {
				return fmt.Errorf("simulating %s, %w", workloadFile, err)
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
	cmd.Flags().StringVarP(&manifests, "filename", "f", "", "Kubernetes manifests to simulate (not implemented yet)")
	return cmd
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
	for _, name := range slices.Sorted(maps.Keys(s.InstanceTypesChosen)) {
		fmt.Fprintf(out, "  %s x%d\n", name, s.InstanceTypesChosen[name])
	}
	return nil
}
