package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
)

func ownerEdge() ent.Edge {
	return edge.To("owner", Owner.Type).Field("owner_id").Unique().Required().Immutable().
		Annotations(entgql.Skip())
}

// configuratorEdge is the required link of a record to its configurator,
// exposed as configuratorID and configurator in the graph.
func configuratorEdge(ref string) ent.Edge {
	return edge.From("configurator", Configurator.Type).Ref(ref).Field("configurator_id").
		Unique().Required()
}

// tenant is the mixin list of a record that belongs to an owner.
func tenant() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, OwnerMixin{}, TimeMixin{}}
}

// readable marks a type as readable through the graph, with a Relay
// connection at the root of Query.
func readable() []schema.Annotation {
	return []schema.Annotation{entgql.QueryField(), entgql.RelayConnection()}
}

// hidden keeps a type out of the graph entirely.
func hidden() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
