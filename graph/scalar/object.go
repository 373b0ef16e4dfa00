package scalar

import (
	"encoding/json"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
)

// MarshalObject writes a JSON object kept as raw JSON (order details,
// option settings) into the response as it is stored: no decoding into
// maps and encoding again, which for a page of orders was a large part
// of the cost of answering. The Map scalar uses it for those fields.
func MarshalObject(v json.RawMessage) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		if len(v) == 0 {
			io.WriteString(w, "null")
			return
		}
		w.Write(v)
	})
}

// UnmarshalObject reads a Map argument into raw JSON; it must be an
// object (null is absent).
func UnmarshalObject(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return json.Marshal(v)
	}
	return nil, apperr.Field("", "{} must be a JSON object, got %s", kind(v))
}
