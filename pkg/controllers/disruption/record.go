package disruption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joinerhq/joiner/pkg/apis/v1"
	"github.com/joinerhq/joiner/pkg/cluster"
)

// A command lives in the leader's memory, and a leader can be killed at any moment: between a
// decision and its validation, or while its replacements launch. What a new leader needs to go on
// is recorded on the candidates' NodeClaims, in two annotations, so that a controller restarted
// more often than a command takes still finishes its commands:
//
//   - decidedAnnotationKey, written when a command is decided: when, and what (the method and the
//     candidates). A leader that decides the same command on the same NodeClaims within
//     maxDecisionAge validates it ValidationPeriod after the first decision, not after its own.
//     Validation still decides again on the cluster as it is then, and the last check against the
//     API server still follows the taint; only the wait is not started over.
//   - commandAnnotationKey, written after the taint and before the replacements are created
//     (their names chosen beforehand): the method, the description, the replacements' names and
//     when they were launched. A new leader's first pass takes every Node tainted
//     karpenter.sh/disrupted whose NodeClaim carries it back into its in-flight commands, which
//     then go on as before: once every replacement is Initialized the candidates are deleted; a
//     replacement that is gone (never created, or failed) or ReplacementTimeout after the launch
//     untaints the candidates and forgets the record. A tainted Node with no record (the leader
//     was killed between the taint and the record) is untainted.
//
// Rolling back (untaint) removes both annotations.
const (
	decidedAnnotationKey = "joiner.dev/disruption-decided"
	commandAnnotationKey = "joiner.dev/disruption-command"
)

// maxDecisionAge is how old a decision recorded by an earlier leader may be and still count as
// the start of the validation period of the same decision now.
const maxDecisionAge = ValidationPeriod + 45*time.Second

// record is commandAnnotationKey's value.
type record struct {
	Reason            v1.DisruptionReason `json:"reason"`
	Label             string              `json:"label"`
	ConsolidationType string              `json:"consolidationType,omitempty"`
	Decision          string              `json:"decision"`
	Replacements      []string            `json:"replacements"`
	LaunchedAt        time.Time           `json:"launchedAt"`
}

// decisionKey names a command's method and candidates, as decidedAnnotationKey records them.
func decisionKey(cmd *command) string {
	names := make([]string, len(cmd.candidates))
	for i, cand := range cmd.candidates {
		names[i] = cand.name()
	}
	slices.Sort(names)
	return fmt.Sprintf("%s/%s %s", cmd.method.label, cmd.method.consolidationType, strings.Join(names, ","))
}

// validateAt returns when the decided command is due for validation: ValidationPeriod after an
// earlier leader decided the same command, as its candidates' NodeClaims record, when that was
// within maxDecisionAge; else ValidationPeriod from now, after recording the decision on them.
func (c *Controller) validateAt(ctx context.Context, cmd *command, now time.Time) time.Time {
	key := decisionKey(cmd)
	var first time.Time
	for i, cand := range cmd.candidates {
		at, ok := decidedAt(cand.node.NodeClaim.Annotations[decidedAnnotationKey], key)
		if !ok || (i > 0 && !at.Equal(first)) {
			first = time.Time{}
			break
		}
		first = at
	}
	if !first.IsZero() && !first.After(now) && now.Sub(first) <= maxDecisionAge {
		log.FromContext(ctx).Info("Resuming the validation of a disruption decided by an earlier leader", "nodes", cmd.nodeNames(), "decidedAt", first)
		return first.Add(ValidationPeriod)
	}
	value := now.UTC().Format(time.RFC3339Nano) + " " + key
	for _, cand := range cmd.candidates {
		if err := c.annotate(ctx, cand.name(), map[string]*string{decidedAnnotationKey: &value}); err != nil {
			// The decision still stands in memory: only a new leader loses it.
			log.FromContext(ctx).Error(err, "Recording the disruption decision", "nodeclaim", cand.name())
		}
	}
	return now.Add(ValidationPeriod)
}

// decidedAt reads decidedAnnotationKey's value: the time, if it records the decision key.
func decidedAt(value, key string) (time.Time, bool) {
	stamp, rest, ok := strings.Cut(value, " ")
	if !ok || rest != key {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	return at, err == nil
}

// recordCommand writes the command's record on its candidates' NodeClaims.
func (c *Controller) recordCommand(ctx context.Context, cmd *command) error {
	raw, err := json.Marshal(record{Reason: cmd.method.reason, Label: cmd.method.label, ConsolidationType: cmd.method.consolidationType,
		Decision: cmd.describe(), Replacements: cmd.launched, LaunchedAt: cmd.launchedAt.UTC()})
	if err != nil {
		return fmt.Errorf("encoding the disruption record, %w", err)
	}
	value := string(raw)
	var errs []error
	for _, cand := range cmd.candidates {
		errs = append(errs, c.annotate(ctx, cand.name(), map[string]*string{commandAnnotationKey: &value}))
	}
	return errors.Join(errs...)
}

// forgetCommand removes both records from the NodeClaim named, if it still exists. It writes
// whether or not the copy at hand shows them: that copy is usually older than the records.
func (c *Controller) forgetCommand(ctx context.Context, nc *v1.NodeClaim) error {
	return c.annotate(ctx, nc.Name, map[string]*string{commandAnnotationKey: nil, decidedAnnotationKey: nil})
}

// annotate sets (or, with nil, removes) annotations of the NodeClaim named by a merge patch: no
// other field is touched, so it cannot conflict. A NodeClaim that is gone is no error.
func (c *Controller) annotate(ctx context.Context, name string, values map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": values}})
	if err != nil {
		return err
	}
	nc := &v1.NodeClaim{}
	nc.Name = name
	if err := c.kube.Patch(ctx, nc, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("annotating nodeclaim %s, %w", name, err)
	}
	return nil
}

// resume is a new leader's first look at the commands of earlier leaders: every Node tainted
// karpenter.sh/disrupted whose NodeClaim records a command (and neither is being deleted) is
// taken back into the in-flight commands, the candidates of one command together; the other
// tainted Nodes are untainted.
func (c *Controller) resume(ctx context.Context) error {
	nodes, err := c.cluster.Nodes(ctx)
	if err != nil {
		return err
	}
	var orphans []*cluster.StateNode
	byRecord := map[string]*command{}
	var order []string
	for _, sn := range nodes {
		if sn.Node == nil || sn.NodeClaim == nil || !disrupted(sn.Node) || sn.Deleting() {
			continue
		}
		raw := sn.NodeClaim.Annotations[commandAnnotationKey]
		var rec record
		if raw == "" || json.Unmarshal([]byte(raw), &rec) != nil || len(rec.Replacements) == 0 {
			orphans = append(orphans, sn)
			continue
		}
		cmd, ok := byRecord[raw]
		if !ok {
			cmd = &command{method: method{reason: rec.Reason, label: rec.Label, consolidationType: rec.ConsolidationType},
				launched: rec.Replacements, launchedAt: rec.LaunchedAt, decided: rec.Decision}
			byRecord[raw] = cmd
			order = append(order, raw)
		}
		cmd.candidates = append(cmd.candidates, &candidate{node: sn})
	}
	for _, raw := range order {
		cmd := byRecord[raw]
		log.FromContext(ctx).Info("Resuming a disruption an earlier leader launched replacements for", "nodes", cmd.nodeNames(),
			"replacements", cmd.launched, "decision", cmd.describe())
		c.inflight = append(c.inflight, cmd)
	}
	if len(orphans) > 0 {
		log.FromContext(ctx).Info("Untainting nodes left tainted by an unfinished disruption", "nodes", len(orphans))
	}
	return c.untaint(ctx, orphans)
}
