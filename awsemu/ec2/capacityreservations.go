package ec2

import (
	"net/http"
	"strings"

	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// describeCapacityReservations answers as for an account without reservations: the emulator does
// not model capacity reservations yet, so an empty list, and NotFound for any requested id.
func (h *Handler) describeCapacityReservations(req request) (any, error) {
	if _, err := maxResults(req.form, 1, 1000); err != nil {
		return nil, err
	}
	var out describeCapacityReservationsResponse
	err := h.state.Update(func(w *state.World) error {
		if err := describe(w, req); err != nil {
			return err
		}
		if ids := req.form.List("CapacityReservationId"); len(ids) > 0 {
			return wire.NewError(http.StatusBadRequest, "InvalidCapacityReservationId.NotFound",
				"The capacity reservation ID '%s' does not exist", strings.Join(ids, ", "))
		}
		if !knownReservationFilters(req.form.Filters()) {
			return wire.InvalidParameterValue("The filter is invalid")
		}
		out = describeCapacityReservationsResponse{XMLNS: ns, RequestID: req.call.RequestID}
		return nil
	})
	return out, err
}

func knownReservationFilters(filters []wire.Filter) bool {
	for _, f := range filters {
		switch f.Name {
		case "instance-type", "availability-zone", "state", "instance-match-criteria", "owner-id", "tenancy", "instance-platform":
		default:
			if !strings.HasPrefix(f.Name, "tag") {
				return false
			}
		}
	}
	return true
}
