package scalar

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
)

// MarshalObject writes a JSON object kept as raw JSON (order details,
// option settings) into the response as it is stored, compacted: no
// decoding into maps and encoding again, which for a page of orders was a
// large part of the cost of answering. The Map scalar uses it for those
// fields.
func MarshalObject(v json.RawMessage) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		w.Write(AppendObject(nil, v))
	})
}

// AppendObject appends stored raw JSON to b without its insignificant
// white space, or null when there is none; REST's answers use it too.
// Stored JSON is valid (the database's json type or the write path checked
// it), so compacting is dropping the white space outside strings, in one
// pass: encoding/json's Compact re-validates through its scanner, which
// costs several times more. A string is skipped whole, to the first quote
// that no backslash escapes (bytes.IndexByte), since most of an object's
// bytes are in its keys and values. The output is what json.Compact
// writes for valid input.
func AppendObject(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for {
				j := bytes.IndexByte(raw[i+1:], '"')
				if j < 0 {
					return append(b, raw[start:]...)
				}
				i += j + 1
				if !escaped(raw, i) {
					break
				}
			}
		case ' ', '\t', '\n', '\r':
			b = append(b, raw[start:i]...)
			start = i + 1
		}
	}
	return append(b, raw[start:]...)
}

// escaped tells whether the quote at raw[i] is escaped: preceded by an
// odd number of backslashes.
func escaped(raw []byte, i int) bool {
	n := 0
	for ; i > 0 && raw[i-1] == '\\'; i-- {
		n++
	}
	return n%2 == 1
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
