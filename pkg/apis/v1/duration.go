package v1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Never is the NillableDuration value that disables a timer (expiry, consolidation).
const Never = "Never"

// NillableDuration is a Go duration that may also be "Never", which decodes to a nil Duration.
// It keeps the text it was decoded from, so an object written back is byte-for-byte what the
// operator applied (no "720h" becoming "720h0m0s" and showing up as a spurious change).
//
// The zero value means "unset" and is omitted when encoded (fields carry `omitzero`), so the
// API server's default applies; build "Never" with MustParseNillableDuration(Never).
type NillableDuration struct {
	// Duration is nil for "Never".
	Duration *time.Duration `json:"-"`
	// Raw is the text the value was decoded from, if any.
	Raw []byte `json:"-"`
}

// MustParseNillableDuration returns the NillableDuration for s ("Never" or a Go duration) and
// panics on bad input; it is meant for constants in code and tests.
func MustParseNillableDuration(s string) NillableDuration {
	d, err := ParseNillableDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// ParseNillableDuration parses "Never" or a Go duration such as "720h" or "1h30m".
func ParseNillableDuration(s string) (NillableDuration, error) {
	raw := []byte(s)
	if s == Never {
		return NillableDuration{Raw: raw}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return NillableDuration{}, fmt.Errorf("parsing duration %q: use a duration such as 720h or 30m, or %q, %w", s, Never, err)
	}
	return NillableDuration{Duration: &d, Raw: raw}, nil
}

// UnmarshalJSON decodes a JSON string: "Never" or a Go duration.
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decoding duration: want a string such as \"720h\" or %q, %w", Never, err)
	}
	parsed, err := ParseNillableDuration(s)
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// MarshalJSON encodes the text the value was decoded from or, for a value built in code, "Never"
// or the duration's String().
func (d NillableDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// IsZero reports whether the value is unset, so that `omitzero` leaves it out of an encoding.
func (d NillableDuration) IsZero() bool { return d.Duration == nil && d.Raw == nil }

// String returns the duration as it would be written in a manifest.
func (d NillableDuration) String() string {
	if d.Raw != nil {
		return string(d.Raw)
	}
	if d.Duration == nil {
		return Never
	}
	return d.Duration.String()
}
