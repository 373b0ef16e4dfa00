package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Setting is a server-wide key/value, such as the generated JWT signing key
// that lets the CLI and every replica agree without configuration.
type Setting struct{ system }

// Fields of the Setting.
func (Setting) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").NotEmpty().Unique().Immutable(),
		field.String("value").Sensitive(),
	}
}
