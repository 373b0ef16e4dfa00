package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/configurator/catalogue/ent/privacy"
)

// Setting is a server-wide key/value, such as the generated JWT signing key
// that lets the CLI and every replica agree without configuration.
type Setting struct{ ent.Schema }

// Fields of the Setting.
func (Setting) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").NotEmpty().Unique().Immutable(),
		field.String("value").Sensitive(),
	}
}

// Annotations of the Setting.
func (Setting) Annotations() []schema.Annotation { return hidden() }

// Policy of the Setting: system work only.
func (Setting) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{privacy.AlwaysDenyRule()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}
