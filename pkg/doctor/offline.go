package doctor

import (
	"fmt"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/joinerhq/joiner/pkg/aws/nodejoin"
	"github.com/joinerhq/joiner/pkg/aws/userdata"
	"github.com/joinerhq/joiner/pkg/manifest"
)

// IRSAAnnotation is the ServiceAccount annotation through which EKS gives pods an IAM role.
const IRSAAnnotation = "eks.amazonaws.com/role-arn"

// Options are what the operator tells doctor that the manifests or the cluster do not say.
type Options struct {
	// AccountID is the cluster's AWS account; it wins over what the manifests imply.
	AccountID string
	// AuthenticationMode is the cluster's (API, API_AND_CONFIG_MAP, CONFIG_MAP); offline it is
	// unknown unless given.
	AuthenticationMode string
	// ClusterName names the cluster in fixes (aws eks commands) and, live, is the cluster
	// eks:DescribeCluster reads.
	ClusterName string
}

// Validate refuses options no cluster has.
func (o Options) Validate() error {
	switch o.AuthenticationMode {
	case "", nodejoin.AuthenticationModeAPI, nodejoin.AuthenticationModeAPIAndConfigMap, nodejoin.AuthenticationModeConfigMap:
	default:
		return fmt.Errorf("--authentication-mode %s is not an EKS authentication mode: use API, API_AND_CONFIG_MAP or CONFIG_MAP", o.AuthenticationMode)
	}
	if o.AccountID != "" && (len(o.AccountID) != 12 || strings.Trim(o.AccountID, "0123456789") != "") {
		return fmt.Errorf("--account %s is not an AWS account id: give the 12 digits, such as 111122223333", o.AccountID)
	}
	return nil
}

// offlineCluster stands for the cluster when rendering userData offline: the checks read the
// operator's userData and the taints, never these values.
func offlineCluster(name string) userdata.Cluster {
	return userdata.Cluster{Name: name, Endpoint: "https://cluster.invalid", CABundle: "b2ZmbGluZQ==", DNS: "10.100.0.10", CIDR: "10.100.0.0/16"}
}

// ReadFiles reads manifest files as ReadManifests does; an error names the file and the fix.
func ReadFiles(paths []string, o Options) (*Observations, error) {
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s, %w: pass the path of a YAML or JSON manifest (-f FILE, repeatable)", p, err)
		}
		files = append(files, File{Name: p, Data: b})
	}
	return ReadManifests(files, o)
}

// File is one manifest file.
type File struct {
	Name string
	Data []byte
}

// ReadManifests types the manifests' NodePools, EC2NodeClasses (with their status, when the
// manifests are `kubectl get -o yaml` output), workloads, kube-system/aws-auth, ServiceAccounts
// and PodIdentityAssociations into offline Observations.
func ReadManifests(files []File, o Options) (*Observations, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	obs := &Observations{Mode: ModeOffline, Cluster: offlineCluster(o.ClusterName), AuthenticationMode: o.AuthenticationMode}
	var identities []identity
	for _, f := range files {
		docs, err := manifest.DecodeBytes(f.Data)
		if err != nil {
			return nil, fmt.Errorf("reading %s, %w: correct the YAML (or JSON) of that document", f.Name, err)
		}
		objs, err := manifest.ObjectsFrom(docs)
		if err != nil {
			return nil, fmt.Errorf("reading %s, %w: correct or remove the field (kubectl apply --dry-run=server -f %s shows the same)", f.Name, err, f.Name)
		}
		obs.NodePools = append(obs.NodePools, objs.NodePools...)
		obs.NodeClasses = append(obs.NodeClasses, objs.NodeClasses...)
		obs.Pods = append(obs.Pods, objs.Pods...)
		for _, doc := range objs.Ignored {
			if err := readOther(obs, doc, &identities); err != nil {
				return nil, fmt.Errorf("reading %s, %s %s, %w", f.Name, doc.GetKind(), doc.GetName(), err)
			}
		}
	}
	if id, ok := controllerIdentity(identities); ok {
		obs.ControllerRoleARN = id.roleARN
		obs.AccountID, obs.AccountSource = accountOf(id.roleARN), "the role of ServiceAccount "+id.serviceAccount
	}
	if obs.AccountID == "" && obs.AWSAuth != nil {
		if account := awsAuthAccount(obs.AWSAuth.MapRoles); account != "" {
			obs.AccountID, obs.AccountSource = account, "kube-system/aws-auth mapRoles (every role in it is of this account)"
		}
	}
	if o.AccountID != "" {
		obs.AccountID, obs.AccountSource = o.AccountID, "--account"
	}
	return obs, nil
}

// identity is an IAM role given to a ServiceAccount, by IRSA or Pod Identity.
type identity struct {
	serviceAccount string
	roleARN        string
}

func readOther(obs *Observations, doc *unstructured.Unstructured, ids *[]identity) error {
	switch {
	case doc.GetKind() == "ConfigMap" && doc.GetAPIVersion() == "v1" && doc.GetName() == "aws-auth" && doc.GetNamespace() == "kube-system":
		mapRoles, _, err := unstructured.NestedString(doc.Object, "data", "mapRoles")
		if err != nil {
			return fmt.Errorf("data.mapRoles must be a string holding a YAML list: %w", err)
		}
		obs.AWSAuth = &nodejoin.AWSAuth{Found: true, MapRoles: mapRoles}
	case doc.GetKind() == "ServiceAccount" && doc.GetAPIVersion() == "v1":
		if arn := doc.GetAnnotations()[IRSAAnnotation]; arn != "" {
			*ids = append(*ids, identity{serviceAccount: namespaced(doc.GetNamespace(), doc.GetName()), roleARN: arn})
		}
	case doc.GetKind() == "PodIdentityAssociation":
		// EKS Pod Identity associations live in AWS; ACK's eks-controller (eks.services.k8s.aws)
		// manages them as objects with spec.roleARN, spec.namespace and spec.serviceAccount.
		arn, _, _ := unstructured.NestedString(doc.Object, "spec", "roleARN")
		ns, _, _ := unstructured.NestedString(doc.Object, "spec", "namespace")
		sa, _, _ := unstructured.NestedString(doc.Object, "spec", "serviceAccount")
		if arn != "" {
			*ids = append(*ids, identity{serviceAccount: namespaced(ns, sa), roleARN: arn})
		}
	}
	return nil
}

func namespaced(ns, name string) string {
	if ns == "" {
		ns = corev1.NamespaceDefault
	}
	return ns + "/" + name
}

// controllerIdentity picks the controller's role: the identity of a ServiceAccount named for
// Joiner or Karpenter, else the only identity there is.
func controllerIdentity(ids []identity) (identity, bool) {
	if i := slices.IndexFunc(ids, func(id identity) bool {
		return strings.Contains(id.serviceAccount, "joiner") || strings.Contains(id.serviceAccount, "karpenter")
	}); i >= 0 {
		return ids[i], true
	}
	if len(ids) == 1 {
		return ids[0], true
	}
	return identity{}, false
}

// accountOf is the account id of an ARN (its fifth field).
func accountOf(arn string) string {
	if parts := strings.Split(arn, ":"); len(parts) > 4 {
		return parts[4]
	}
	return ""
}

// awsAuthAccount is the one account of every role aws-auth maps, or empty when they differ or
// there are none. The roles a cluster maps are its own account's unless the operator set up
// cross-account access, which is why a lone other account is not guessed from.
func awsAuthAccount(mapRoles string) string {
	var roles []struct {
		RoleARN string `json:"rolearn"`
	}
	if err := yaml.Unmarshal([]byte(mapRoles), &roles); err != nil {
		return ""
	}
	account := ""
	for _, r := range roles {
		a := accountOf(strings.TrimSpace(r.RoleARN))
		if a == "" || (account != "" && a != account) {
			return ""
		}
		account = a
	}
	return account
}
