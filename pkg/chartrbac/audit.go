package chartrbac

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// AuditPolicy is an audit policy (kube-apiserver --audit-policy-file) that logs every request
// once, when its response is sent, at Metadata level: enough for Unused.
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
`

// AuditPolicyFor is an audit policy that logs, as AuditPolicy does, the requests of user only:
// what Unused reads of a long run, without the control plane's own requests.
func AuditPolicyFor(user string) string {
	return fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    users: [%q]
  - level: None
`, user)
}

// Grant is one verb on one resource that a Role or ClusterRole of the chart grants; Namespace
// is the Role's ("" for a ClusterRole) and ResourceName the name it is limited to, if any.
type Grant struct {
	Kind         string
	Namespace    string
	APIGroup     string
	Resource     string
	Verb         string
	ResourceName string
}

func (g Grant) String() string {
	group := g.APIGroup
	if group == "" {
		group = "core"
	}
	s := fmt.Sprintf("%s: %s %s/%s", g.Kind, g.Verb, group, g.Resource)
	if g.ResourceName != "" {
		s += " " + g.ResourceName
	}
	if g.Namespace != "" {
		s += " in " + g.Namespace
	}
	return s
}

// Grants lists every (group, resource, verb, name) the rendered chart's Roles and ClusterRoles
// grant, one Grant each.
func Grants(docs []*unstructured.Unstructured) ([]Grant, error) {
	var out []Grant
	for _, d := range docs {
		if d.GetKind() != "Role" && d.GetKind() != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole // a Role's rules have the same shape
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, &role); err != nil {
			return nil, fmt.Errorf("reading %s %s, %w", d.GetKind(), d.GetName(), err)
		}
		for _, r := range role.Rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						for _, n := range names {
							out = append(out, Grant{Kind: d.GetKind(), Namespace: d.GetNamespace(), APIGroup: g, Resource: res, Verb: v, ResourceName: n})
						}
					}
				}
			}
		}
	}
	return out, nil
}

// auditEvent is the part of an audit.k8s.io/v1 Event that Unused reads.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// Unused reads an audit log (JSON lines, as --audit-log-path writes with AuditPolicy) and
// returns the grants that no request of user exercised, and the requests of user the API server
// refused (403), in log order. A request exercises a grant when group, resource (with its
// subresource, as "pods/eviction"), verb, and for a Role its namespace and for a named grant
// its name, all match.
func Unused(log io.Reader, user string, grants []Grant) (unused []Grant, forbidden []string, err error) {
	used := make([]bool, len(grants))
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("reading the audit log, %w", err)
		}
		if e.User.Username != user || e.ObjectRef == nil {
			continue
		}
		ref := e.ObjectRef
		resource := ref.Resource
		if ref.Subresource != "" {
			resource += "/" + ref.Subresource
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 403 {
			forbidden = append(forbidden, fmt.Sprintf("%s %s/%s %s/%s", e.Verb, ref.APIGroup, resource, ref.Namespace, ref.Name))
			continue
		}
		for i, g := range grants {
			if g.APIGroup == ref.APIGroup && g.Resource == resource && g.Verb == e.Verb &&
				(g.Namespace == "" || g.Namespace == ref.Namespace) && (g.ResourceName == "" || g.ResourceName == ref.Name) {
				used[i] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading the audit log, %w", err)
	}
	for i, g := range grants {
		if !used[i] {
			unused = append(unused, g)
		}
	}
	slices.SortFunc(unused, func(a, b Grant) int { return strings.Compare(a.String(), b.String()) })
	return unused, forbidden, nil
}

// ServiceAccountUser is the user name the API server gives a ServiceAccount's token.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
