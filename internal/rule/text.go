package rule

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// ValidText is a hook that refuses text PostgreSQL cannot store, whatever
// the transport it came through: invalid UTF-8 and NUL characters, in
// string fields, string lists and anywhere inside JSON fields (keys
// included). Without it such input is a database error, a 500, on
// PostgreSQL while SQLite would store it; with it both answer BAD_REQUEST
// naming the field.
func ValidText() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			for _, name := range m.Fields() {
				v, _ := m.Field(name)
				if !storable(v) {
					return nil, apperr.Field(name, "%s must be valid UTF-8 text without NUL characters", name)
				}
			}
			return next.Mutate(ctx, m)
		})
	}
}

// storable reports whether every text inside v is valid UTF-8 without NUL.
func storable(v any) bool {
	switch v := v.(type) {
	case json.RawMessage:
		return storableJSON(v)
	case string:
		return valid.Storable(v)
	case []string:
		for _, s := range v {
			if !storable(s) {
				return false
			}
		}
	case map[string]any:
		for k, x := range v {
			if !storable(k) || !storable(x) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !storable(x) {
				return false
			}
		}
	}
	return true
}

// storableJSON applies storable to every key and string of a raw JSON
// value; a NUL arrives there as the escape \u0000.
func storableJSON(raw json.RawMessage) bool {
	if !utf8.Valid(raw) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return err == io.EOF
		}
		if s, ok := tok.(string); ok && !valid.Storable(s) {
			return false
		}
	}
}
