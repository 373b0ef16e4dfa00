// Package scalar holds the custom GraphQL scalars of the hand-written schema.
package scalar

import (
	"io"
	"strconv"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
)

// Date is a UTC calendar date; list filters use it for created_at bounds.
type Date struct{ time.Time }

// ParseDate reads YYYY-MM-DD, or an RFC 3339 date-time reduced to its UTC
// date, so that REST and GraphQL accept the same input.
func ParseDate(s string) (Date, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return Date{t}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return Date{}, apperr.E(apperr.Invalid, "%q is not a date: use YYYY-MM-DD", s)
	}
	t = t.UTC()
	return Date{time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)}, nil
}

// UnmarshalGQL implements graphql.Unmarshaler.
func (d *Date) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return apperr.E(apperr.Invalid, "a date must be a string YYYY-MM-DD, not %T", v)
	}
	p, err := ParseDate(s)
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// MarshalGQL implements graphql.Marshaler.
func (d Date) MarshalGQL(w io.Writer) {
	io.WriteString(w, strconv.Quote(d.Format(time.DateOnly)))
}
