package disruption

// single takes the first underutilized candidate that can be deleted, or replaced by one
// cheaper node, noting why each one before it cannot.
func (ps *pass) single(d *decision) (*command, error) {
	for _, cand := range ps.underutilized(d) {
		if why, failed := ps.alone[cand]; failed {
			d.note(cand, why)
			continue
		}
		cmd, why, err := ps.consolidate([]*candidate{cand}, methodSingle)
		if err != nil {
			return nil, err
		}
		ps.remember(cand, cmd != nil, why)
		if cmd != nil {
			return cmd, nil
		}
		d.note(cand, why)
	}
	return nil, nil
}
