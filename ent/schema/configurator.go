package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/rule"
)

// Configurator is one 3D product configurator of an owner. Its name is
// presented as configurator_name by REST v1.
type Configurator struct{ ent.Schema }

// Mixin of the Configurator.
func (Configurator) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, TimeMixin{}} }

// Fields of the Configurator. owner_id is declared here rather than through
// OwnerMixin because the owner edge of a configurator has an inverse.
func (Configurator) Fields() []ent.Field {
	return []ent.Field{
		field.Int("owner_id").Immutable().Annotations(entgql.Skip()),
		field.String("name").NotEmpty().Annotations(entgql.OrderField("NAME")),
	}
}

// Edges of the Configurator.
func (Configurator) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("owner", Owner.Type).Ref("configurators").Field("owner_id").
			Unique().Required().Immutable().Annotations(entgql.Skip()),
		edge.To("orders", Order.Type).Annotations(entgql.RelayConnection()),
		edge.To("forms", ConfiguratorForm.Type),
		edge.To("form_fields", FormField.Type),
		edge.To("options", ConfiguratorOption.Type),
		edge.To("option_sets", OptionSet.Type),
		edge.To("tokens", APIToken.Type).Annotations(entgql.Skip()),
		edge.To("shares", Share.Type).Annotations(entgql.Skip()),
	}
}

// Annotations of the Configurator.
func (Configurator) Annotations() []schema.Annotation { return readable() }

// Indexes of the Configurator.
func (Configurator) Indexes() []ent.Index {
	return []ent.Index{index.Fields("owner_id", "created_at")}
}

// Policy of the Configurator: tenancy as for every owned record;
// configurators are created by operators, never through the API.
func (Configurator) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.AllowSharedRead(), rule.FilterOwner()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}
