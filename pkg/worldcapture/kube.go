package worldcapture

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// IRSAAnnotation is the ServiceAccount annotation naming the role of IAM Roles for Service
// Accounts.
const IRSAAnnotation = "eks.amazonaws.com/role-arn"

// controllerNames are the app.kubernetes.io/name labels of the controllers whose settings and
// ServiceAccount a capture reads: Joiner's chart and Karpenter's.
var controllerNames = []string{"joiner", "karpenter"}

// Discovery is what the live cluster shows: the classes whose selections are captured, and the
// controller's role and interruption queue.
type Discovery struct {
	NodeClasses []awsv1.EC2NodeClass
	// ServiceAccount is the controller's ServiceAccount; empty when no controller was found.
	ServiceAccount types.NamespacedName
	// ControllerRole is the ServiceAccount's IRSA role ARN; "" when it has none (EKS Pod
	// Identity may then give it).
	ControllerRole string
	// InterruptionQueue is the controller's INTERRUPTION_QUEUE setting.
	InterruptionQueue string
}

// Discover reads the EC2NodeClasses and the controller (a Deployment labelled
// app.kubernetes.io/name joiner or karpenter: its ServiceAccount and INTERRUPTION_QUEUE). It
// fails when the classes cannot be listed; what else it cannot read is a Note.
func Discover(ctx context.Context, kube client.Reader) (*Discovery, []Note, error) {
	var classes awsv1.EC2NodeClassList
	if err := kube.List(ctx, &classes); err != nil {
		return nil, nil, fmt.Errorf("listing EC2NodeClasses (get and list on ec2nodeclasses.karpenter.k8s.aws), %w", err)
	}
	d := &Discovery{NodeClasses: classes.Items}
	if d.NodeClasses == nil {
		d.NodeClasses = []awsv1.EC2NodeClass{}
	}
	var notes []Note
	var deployments appsv1.DeploymentList
	if err := kube.List(ctx, &deployments); err != nil {
		notes = append(notes, Note{Subject: "controllerRole", Reason: fmt.Sprintf("listing Deployments to find the controller failed (%v); pass --controller-role and --interruption-queue", err)})
		return d, notes, nil
	}
	for _, dep := range deployments.Items {
		if !slices.Contains(controllerNames, dep.Labels["app.kubernetes.io/name"]) {
			continue
		}
		spec := dep.Spec.Template.Spec
		sa := spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		d.ServiceAccount = types.NamespacedName{Namespace: dep.Namespace, Name: sa}
		for _, ctr := range spec.Containers {
			for _, env := range ctr.Env {
				if env.Name == "INTERRUPTION_QUEUE" && env.Value != "" {
					d.InterruptionQueue = env.Value
				}
			}
		}
		var account corev1.ServiceAccount
		if err := kube.Get(ctx, d.ServiceAccount, &account); err != nil {
			notes = append(notes, Note{Subject: "controllerRole", Reason: fmt.Sprintf("reading ServiceAccount %s failed (%v)", d.ServiceAccount, err)})
		} else {
			d.ControllerRole = account.Annotations[IRSAAnnotation]
		}
		break
	}
	return d, notes, nil
}
