package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/rule"
)

// Owner is the tenant: a customer of the platform who owns configurators,
// catalogue data and orders.
type Owner struct{ ent.Schema }

// Mixin of the Owner.
func (Owner) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, TimeMixin{}} }

// Fields of the Owner.
func (Owner) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
	}
}

// Edges of the Owner.
func (Owner) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("configurators", Configurator.Type),
	}
}

// Annotations of the Owner.
func (Owner) Annotations() []schema.Annotation { return hidden() }

// Policy of the Owner: a viewer sees only its own owner; owners are created
// by operators (seed, CLI), never through the API.
func (Owner) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterOwnerID()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}
