package doctor

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for a terminal: one block per finding, most severe first, then a
// summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%-8s %s  %s\n", strings.ToUpper(string(f.Severity)), f.Object, f.Reason)
		fmt.Fprintf(&b, "  %s\n", f.Message)
		fmt.Fprintf(&b, "  Fix:%s\n\n", indent(f.Fix))
	}
	account, mode := "unknown", r.AuthenticationMode
	if r.AccountID != "" {
		account = r.AccountID + " (from " + r.AccountSource + ")"
	}
	if mode == "" {
		mode = "unknown"
	}
	fmt.Fprintf(&b, "account %s; authentication mode %s\n", account, mode)
	fmt.Fprintf(&b, "%s check of %d EC2NodeClasses, %d NodePools, %d pods: %d errors, %d warnings, %d advice\n",
		r.Mode, r.Checked.NodeClasses, r.Checked.NodePools, r.Checked.Pods, r.Errors, r.Warnings, r.Advice)
	_, err := io.WriteString(w, b.String())
	return err
}

// indent keeps a multi-line fix (a mapRoles entry, a YAML fragment) under its finding.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if !strings.Contains(s, "\n") {
		return " " + s
	}
	return "\n    " + strings.ReplaceAll(s, "\n", "\n    ")
}
