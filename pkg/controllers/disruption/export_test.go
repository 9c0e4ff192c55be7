package disruption

import "sigs.k8s.io/controller-runtime/pkg/client"

// SetAPIReader replaces the reader of the last check, as Register does with the manager's
// uncached reader.
func (c *Controller) SetAPIReader(r client.Reader) { c.apiReader = r }
