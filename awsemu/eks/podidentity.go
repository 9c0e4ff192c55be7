package eks

import (
	"net/http"

	"github.com/joinerhq/joiner/awsemu/wire"
)

// podIdentityARN is the ARN of a cluster's Pod Identity association: what
// DescribePodIdentityAssociation is authorized against.
func (c *call) podIdentityARN() string {
	return "arn:aws:eks:" + c.region.Name + ":" + c.world.AccountID + ":podidentityassociation/" + c.route.cluster + "/" + c.route.principal
}

// podIdentity serves ListPodIdentityAssociations and DescribePodIdentityAssociation. The emulated
// clusters have no EKS Pod Identity associations (their controllers authenticate with access
// keys), so the list is empty, in any authentication mode, and an association id is
// ResourceNotFoundException, as EKS answers an id it does not know. maxResults is checked as EKS
// checks it (1 to 100).
func (c *call) podIdentity() (any, error) {
	if c.route.action == "eks:DescribePodIdentityAssociation" {
		return nil, wire.NewError(http.StatusNotFound, "ResourceNotFoundException", "No Pod Identity Association found for id: %s.", c.route.principal)
	}
	if _, _, _, err := c.page("ListPodIdentityAssociations", 0); err != nil {
		return nil, err
	}
	return map[string]any{"associations": []any{}}, nil
}
