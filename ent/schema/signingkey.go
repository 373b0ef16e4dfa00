package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SigningKey is one HS256 key of the service's own tokens, kept in the
// database so that the CLI and every replica hold the same key set: the
// newest signs, every one verifies, so a key can be rotated without
// invalidating the tokens signed with the one before.
type SigningKey struct{ system }

// Fields of the SigningKey.
func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("kid").NotEmpty().Unique().Immutable().
			Comment("Key id, the kid header of the tokens it signs; derived from the secret, never revealing it"),
		field.String("secret").NotEmpty().Immutable().Sensitive().
			Comment("The key, base64 (standard, unpadded)"),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}
