package validation

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Denial is a decoded authorization failure: who was refused what, on which resource, and why.
type Denial struct {
	// Action is the denied IAM action, service-qualified (ec2:RunInstances, iam:PassRole).
	Action string
	// Resource is the ARN the action was refused on.
	Resource string
	// PrincipalARN is the caller: for an assumed role, the role's IAM ARN
	// (arn:aws:iam::<account>:role/<name>), else the ARN as reported.
	PrincipalARN string
	// ExplicitDeny is true when a Deny statement matched; false when no statement allowed the
	// call.
	ExplicitDeny bool
	// DenyingStatements are the IDs (Sid) of the matched Deny statements.
	DenyingStatements []string
	// Conditions are the request's condition keys and values, such as aws:RequestTag/team.
	Conditions map[string][]string
}

// decodedMessage is the JSON document DecodeAuthorizationMessage returns.
type decodedMessage struct {
	Allowed           bool             `json:"allowed"`
	ExplicitDeny      bool             `json:"explicitDeny"`
	MatchedStatements items[statement] `json:"matchedStatements"`
	Context           struct {
		Principal struct {
			ID  string `json:"id"`
			ARN string `json:"arn"`
		} `json:"principal"`
		Action     string           `json:"action"`
		Resource   string           `json:"resource"`
		Conditions items[condition] `json:"conditions"`
	} `json:"context"`
}

type items[T any] struct {
	Items []T `json:"items"`
}

type value struct {
	Value string `json:"value"`
}

type statement struct {
	StatementID string `json:"statementId"`
	Effect      string `json:"effect"`
}

type condition struct {
	Key    string       `json:"key"`
	Values items[value] `json:"values"`
}

// DecodeDenial reads the DecodedMessage of an STS DecodeAuthorizationMessage response. It fails
// when the message is not such a document, or says the request was allowed.
func DecodeDenial(decoded string) (*Denial, error) {
	var m decodedMessage
	if err := json.Unmarshal([]byte(decoded), &m); err != nil {
		return nil, fmt.Errorf("reading decoded authorization message, %w", err)
	}
	if m.Allowed {
		return nil, fmt.Errorf("reading decoded authorization message, it says the request was allowed")
	}
	d := &Denial{
		Action:       qualifiedAction(m.Context.Action, m.Context.Resource),
		Resource:     m.Context.Resource,
		PrincipalARN: roleARN(m.Context.Principal.ARN),
		ExplicitDeny: m.ExplicitDeny,
		Conditions:   map[string][]string{},
	}
	for _, s := range m.MatchedStatements.Items {
		if strings.EqualFold(s.Effect, "DENY") && s.StatementID != "" {
			d.DenyingStatements = append(d.DenyingStatements, s.StatementID)
		}
	}
	for _, c := range m.Context.Conditions.Items {
		for _, v := range c.Values.Items {
			d.Conditions[c.Key] = append(d.Conditions[c.Key], v.Value)
		}
	}
	return d, nil
}

// qualifiedAction prefixes an action with its service, taken from the resource ARN, when the
// message gives it bare (RunInstances).
func qualifiedAction(action, resource string) string {
	if action == "" || strings.Contains(action, ":") {
		return action
	}
	parts := strings.SplitN(resource, ":", 4)
	if len(parts) < 3 || parts[2] == "" {
		return action
	}
	return parts[2] + ":" + action
}

// roleARN turns an assumed-role session ARN (arn:aws:sts::123:assumed-role/Name/session) into the
// role's ARN (arn:aws:iam::123:role/Name); other ARNs are returned as they are.
func roleARN(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[2] != "sts" || !strings.HasPrefix(parts[5], "assumed-role/") {
		return arn
	}
	role := strings.Split(strings.TrimPrefix(parts[5], "assumed-role/"), "/")[0]
	return fmt.Sprintf("arn:%s:iam::%s:role/%s", parts[1], parts[4], role)
}

// Message says what was refused, to whom and why, for a condition message.
func (d *Denial) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not authorized to perform %s on %s", d.PrincipalARN, d.Action, d.Resource)
	if d.ExplicitDeny {
		fmt.Fprintf(&b, ": an explicit Deny matched")
		if len(d.DenyingStatements) > 0 {
			fmt.Fprintf(&b, " (statement %s)", strings.Join(d.DenyingStatements, ", "))
		}
	} else {
		b.WriteString(": no statement of its policies allows it")
	}
	if tags := d.requestTags(); len(tags) > 0 {
		fmt.Fprintf(&b, "; the request carried tags %s, so a statement whose Condition requires other tag values does not match", strings.Join(tags, ", "))
	}
	return b.String()
}

// Fix says what to change in IAM: the statement to add, or the Deny to narrow.
func (d *Denial) Fix() string {
	if d.ExplicitDeny {
		which := "the Deny statement"
		if len(d.DenyingStatements) > 0 {
			which = "statement " + strings.Join(d.DenyingStatements, ", ")
		}
		return fmt.Sprintf("change %s in the policies of %s so that it no longer matches %s on %s", which, d.PrincipalARN, d.Action, d.Resource)
	}
	stmt, _ := json.Marshal(struct {
		Effect   string
		Action   string
		Resource string
	}{"Allow", d.Action, d.Resource})
	return fmt.Sprintf("add this statement to a policy of %s: %s", d.PrincipalARN, stmt)
}

// requestTags are the aws:RequestTag/<key>=<value> conditions, sorted.
func (d *Denial) requestTags() []string {
	var tags []string
	for key, values := range d.Conditions {
		if tag, ok := strings.CutPrefix(key, "aws:RequestTag/"); ok {
			for _, v := range values {
				tags = append(tags, tag+"="+v)
			}
		}
	}
	slices.Sort(tags)
	return tags
}
