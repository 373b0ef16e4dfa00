package scalar

import (
	"encoding/json"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// MarshalID writes a record id as a GraphQL ID, the string of its digits.
func MarshalID(id int) graphql.Marshaler { return graphql.MarshalIntID(id) }

// UnmarshalID reads an ID argument by the rules REST applies to its ids
// (valid.ID): a plain base-10 integer of 1 or more, given as a string or a
// number. Anything else is BAD_REQUEST about the argument, never an
// internal error; the error's field is the argument, which gqlgen's path
// names.
func UnmarshalID(v any) (int, error) {
	switch v := v.(type) {
	case string:
		return valid.ID("", v)
	case json.Number:
		return valid.ID("", v.String())
	case int:
		return v, valid.Positive("", v)
	case int64:
		return int(v), valid.Positive("", int(v))
	case float64:
		return valid.ID("", strconv.FormatFloat(v, 'f', -1, 64))
	}
	return 0, apperr.Field("", "{} must be an id (a positive integer), got %s", kind(v))
}
