package disruption

import "sigs.k8s.io/controller-runtime/pkg/client"

// SetAPIReader replaces the reader of the last check, as Register does with the manager's
// uncached reader.
func (c *Controller) SetAPIReader(r client.Reader) { c.apiReader = r }

// MaxDecisionAge is how old an earlier leader's decision may be and still start the validation
// period of the same decision.
const MaxDecisionAge = maxDecisionAge
