// Package scalar holds the custom GraphQL scalars of the hand-written schema.
// They read their values by the rules of internal/input, the ones REST
// applies to the same values, so both transports accept the same input.
package scalar

import (
	"io"
	"strconv"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// Date is a UTC calendar date; list filters use it for created_at bounds.
type Date struct{ time.Time }

// UnmarshalGQL reads YYYY-MM-DD, or an RFC 3339 date-time reduced to its
// UTC date (valid.Date).
func (d *Date) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return apperr.Field("", "{} must be a date YYYY-MM-DD, got %s", kind(v))
	}
	t, err := valid.Date("", s)
	if err != nil {
		return err
	}
	d.Time = t
	return nil
}

// MarshalGQL implements graphql.Marshaler.
func (d Date) MarshalGQL(w io.Writer) {
	io.WriteString(w, strconv.Quote(d.Format(time.DateOnly)))
}

// kind names the JSON kind of a decoded value, for refusals that must not
// show Go type names.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return "a number"
}
