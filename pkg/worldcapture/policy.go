package worldcapture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
)

// denyAll is the controllerPolicy of a role with no readable policy: the world's default,
// allow-all, would misrepresent it.
const denyAll = `{"Version":"2012-10-17","Statement":[{"Sid":"NoPolicyCaptured","Effect":"Deny","Action":"*","Resource":"*"}]}`

// namedPolicy is a policy document and where it came from.
type namedPolicy struct {
	source string
	doc    string
}

// controllerPolicy reads the role's inline policies and the documents of its managed policies
// and merges them into the one document the world holds.
func (c *capturer) controllerPolicy(ctx context.Context, r role) json.RawMessage {
	var docs []namedPolicy
	for _, name := range r.inline {
		out, err := c.api.IAM.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: aws.String(r.name), PolicyName: aws.String(name)})
		if err != nil {
			c.failed("controllerPolicy", "iam:GetRolePolicy", err)
			continue
		}
		docs = append(docs, namedPolicy{source: name, doc: decodeDocument(aws.ToString(out.PolicyDocument))})
	}
	for _, arn := range r.managed {
		doc, ok := c.managedPolicy(ctx, arn)
		if ok {
			docs = append(docs, namedPolicy{source: arn[strings.LastIndex(arn, "/")+1:], doc: doc})
		}
	}
	merged, err := mergePolicies(docs)
	if err != nil {
		c.note("controllerPolicy", "%v; the world denies the controller everything", err)
		return json.RawMessage(denyAll)
	}
	return merged
}

// managedPolicy reads the default version's document of a managed policy.
func (c *capturer) managedPolicy(ctx context.Context, arn string) (string, bool) {
	p, err := c.api.IAM.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		c.failed("controllerPolicy", "iam:GetPolicy", err)
		c.note("controllerPolicy", "the statements of managed policy %s are missing from it", arn)
		return "", false
	}
	v, err := c.api.IAM.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.Policy.DefaultVersionId})
	if err != nil {
		c.failed("controllerPolicy", "iam:GetPolicyVersion", err)
		c.note("controllerPolicy", "the statements of managed policy %s are missing from it", arn)
		return "", false
	}
	return decodeDocument(aws.ToString(v.PolicyVersion.Document)), true
}

// decodeDocument undoes the URL encoding IAM returns policy documents in.
func decodeDocument(s string) string {
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// mergePolicies is the one document the world holds for the controller's policies: a single
// policy as it is (compacted), several as the union of their statements, each Sid kept unique by
// prefixing the source's name when two collide. No policy at all is a denial of everything.
func mergePolicies(docs []namedPolicy) (json.RawMessage, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("the role has no policy the capture could read")
	}
	if len(docs) == 1 {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(docs[0].doc)); err != nil {
			return nil, fmt.Errorf("policy %s is not JSON, %w", docs[0].source, err)
		}
		return b.Bytes(), nil
	}
	var all []map[string]json.RawMessage
	sids := map[string]bool{}
	for _, d := range docs {
		var doc struct {
			Statement json.RawMessage
		}
		if err := json.Unmarshal([]byte(d.doc), &doc); err != nil {
			return nil, fmt.Errorf("policy %s is not JSON, %w", d.source, err)
		}
		for _, raw := range statements(doc.Statement) {
			var st map[string]json.RawMessage
			if err := json.Unmarshal(raw, &st); err != nil {
				return nil, fmt.Errorf("policy %s has a statement that is not an object, %w", d.source, err)
			}
			var sid string
			if s, ok := st["Sid"]; ok {
				_ = json.Unmarshal(s, &sid)
			}
			if sid != "" {
				if sids[sid] {
					sid = sidOf(d.source) + sid
					st["Sid"], _ = json.Marshal(sid)
				}
				sids[sid] = true
			}
			all = append(all, st)
		}
	}
	return json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": all})
}

// sidOf is the alphanumeric form of a policy name, which prefixes a colliding Sid.
func sidOf(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
