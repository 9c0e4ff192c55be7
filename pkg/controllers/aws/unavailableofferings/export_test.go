package unavailableofferings

// SetElected replaces the channel closed when the replica leads, as Register does with the
// manager's.
func (c *Controller) SetElected(elected <-chan struct{}) { c.elected = elected }
