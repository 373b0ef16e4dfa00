package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
)

// APIToken is the record behind a JWT: revoking it stops the JWT at once,
// and it keeps the option override data an integrator stored with it.
type APIToken struct{ ownedHidden }

// Fields of the APIToken.
func (APIToken) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("kind").Values("open_api", "dashboard").Immutable(),
		field.Int("configurator_id").Optional().Nillable().Immutable().
			Comment("Home configurator of an open_api token"),
		field.JSON("options_data", map[string]any{}).Optional().
			Comment("Override data stored through configurator-options/set/new-options"),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
		field.String("subject").Optional().Nillable().Unique().Immutable().
			Comment("The caller behind an OpenID provider's tokens with the scope they map to (issuer, sub, kind, owner, configurator); null for the service's own tokens"),
		field.Time("expires_at").Optional().Nillable().Immutable().
			Comment("When the token stops working (its JWT's exp); null: never, until revoked"),
	}
}

// Edges of the APIToken.
func (APIToken) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("configurator", Configurator.Type).Ref("tokens").Field("configurator_id").
			Unique().Immutable(),
		edge.To("shares", Share.Type),
	}
}
