package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// WriteText prints the report for a terminal: the outcome, then per NodePool whether the pod
// fits, every problem, what the NodePool offers for each label the pod asks for, and the cheapest
// instance types that would hold it.
func (r *PodReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Pod %s\n", r.Pod)
	var req []string
	for _, k := range slices.Sorted(maps.Keys(r.Requests)) {
		req = append(req, k+"="+r.Requests[k])
	}
	fmt.Fprintf(&b, "  requests: %s\n", strings.Join(req, " "))
	fmt.Fprintf(&b, "  outcome:  %s\n", r.Outcome)
	for _, p := range r.PodProblems {
		fmt.Fprintf(&b, "  pod problem: %s\n", p)
	}
	for _, n := range r.Scheduling {
		fmt.Fprintf(&b, "  scheduling: %s\n", n)
	}
	if len(r.NodePools) == 0 {
		b.WriteString("\nNo NodePool exists: create one whose requirements and labels the pod's node selection allows.\n")
	}
	for _, np := range r.NodePools {
		verdict := "does not fit"
		if np.Fits {
			verdict = "fits"
		}
		fmt.Fprintf(&b, "\nNodePool %s: %s\n", np.Name, verdict)
		for _, p := range np.Problems {
			fmt.Fprintf(&b, "  - %s: %s\n", p.Kind, p.Message)
		}
		for _, p := range np.Warnings {
			fmt.Fprintf(&b, "  ! %s: %s\n", p.Kind, strings.ReplaceAll(p.Message, "\n", "\n      "))
		}
		for _, l := range np.Labels {
			mark := "ok"
			if !l.Satisfied {
				mark = "NO"
			}
			var offers string
			switch {
			case l.Offered != nil:
				offers = strings.Join(l.Offered, ", ")
			case l.AnyExcept != "":
				offers = "any value " + l.AnyExcept
			default:
				offers = "(label not set on its nodes)"
			}
			fmt.Fprintf(&b, "  label %s: pod requires %s%s; offered: %s [%s]\n", l.Key, l.PodRequires, termSuffix(l.Term), offers, mark)
		}
		if np.FittingTypes > 0 {
			fmt.Fprintf(&b, "  instance types that hold the pod (%d, cheapest first):", np.FittingTypes)
			for _, t := range np.InstanceTypes {
				fmt.Fprintf(&b, " %s $%.4f/h (%s, %s);", t.Name, t.Price, t.Zone, t.CapacityType)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func termSuffix(term int) string {
	if term == 0 {
		return ""
	}
	return fmt.Sprintf(" (node affinity term %d)", term)
}
