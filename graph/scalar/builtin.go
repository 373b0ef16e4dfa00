package scalar

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// The built-in scalars Int, Float and String read their input by the
// GraphQL specification's coercion rules, which are also REST's rules
// for the same JSON values: an Int is a whole number that fits in 32 bits
// (valid.Int), a Float a finite number, a String a string. gqlgen's own
// versions also take numbers written as strings and strings written as
// numbers, and Ints beyond 32 bits, which REST refuses. A refusal is
// BAD_REQUEST about the argument or input field (gqlgen's path names it).

// MarshalInt writes an Int.
func MarshalInt(i int) graphql.Marshaler { return graphql.MarshalInt(i) }

// UnmarshalInt reads an Int: a whole number of 32 bits, not a string.
func UnmarshalInt(v any) (int, error) {
	switch v := v.(type) {
	case int, int64, json.Number:
		return valid.Int("", fmt.Sprint(v), 32)
	case float64:
		return valid.Int("", strconv.FormatFloat(v, 'f', -1, 64), 32)
	}
	return 0, apperr.Field("", "{} must be an integer, got %s", kind(v))
}

// MarshalFloatContext writes a Float; NaN and infinities, which JSON
// cannot carry, are an error (gqlgen's FloatContext).
func MarshalFloatContext(f float64) graphql.ContextMarshaler { return graphql.MarshalFloatContext(f) }

// UnmarshalFloatContext reads a Float: a finite number, not a string.
func UnmarshalFloatContext(_ context.Context, v any) (float64, error) {
	var f float64
	switch v := v.(type) {
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case float64:
		f = v
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(v.String(), 64); err != nil && !math.IsInf(f, 0) {
			return 0, apperr.Field("", "{} must be a number, got %q", valid.Clip(v.String()))
		}
	default:
		return 0, apperr.Field("", "{} must be a number, got %s", kind(v))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, apperr.Field("", "{} is out of range")
	}
	return f, nil
}

// MarshalString writes a String.
func MarshalString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalString reads a String: a string, not a number or a boolean,
// of valid UTF-8 without NUL characters (valid.Text), so that a filter
// answers alike on both databases (PostgreSQL cannot compare such text;
// SQLite would match nothing) and a write is refused as the write rule
// would.
func UnmarshalString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, valid.Text("", s)
	}
	return "", apperr.Field("", "{} must be a string, got %s", kind(v))
}
