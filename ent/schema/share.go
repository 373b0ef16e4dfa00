package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Share is an immutable snapshot of override data accepted from an Open API
// token. Its key names it in a share link, so a link already sent to a
// customer keeps showing what it showed when it was made, even after the
// token's current override data is replaced.
type Share struct{ ownedHidden }

// Fields of the Share.
func (Share) Fields() []ent.Field {
	return []ent.Field{
		field.String("key").NotEmpty().Unique().Immutable().Sensitive().
			Comment("Random, URL-safe; the only credential of a share link"),
		field.Int("token_id").Immutable(),
		field.Int("configurator_id").Immutable(),
		field.JSON("data", map[string]any{}).Immutable().
			Comment("Canonical override data (internal/override)"),
		field.String("digest").Immutable().
			Comment("SHA-256 of the canonical data: equal content, same share"),
	}
}

// Edges of the Share.
func (Share) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("token", APIToken.Type).Ref("shares").Field("token_id").
			Unique().Required().Immutable(),
		edge.From("configurator", Configurator.Type).Ref("shares").Field("configurator_id").
			Unique().Required().Immutable(),
	}
}

// Indexes of the Share: one share per token and content.
func (Share) Indexes() []ent.Index {
	return []ent.Index{index.Fields("token_id", "digest").Unique()}
}
