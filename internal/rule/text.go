package rule

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
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
	case string:
		return utf8.ValidString(v) && !strings.ContainsRune(v, 0)
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
