package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/rule"
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

// readable marks a type as readable through the graph, with a Relay
// connection at the root of Query.
func readable() []schema.Annotation {
	return []schema.Annotation{entgql.QueryField(), entgql.RelayConnection()}
}

// hidden keeps a type out of the graph entirely.
func hidden() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}

// TypedScan marks a type whose query gets ScanWith and AllScanned
// (ent/template/scan.tmpl): a hot list of it reads its rows into typed
// destinations of its own instead of ent's generic scan.
type TypedScan struct{}

// Name names the annotation for the templates.
func (TypedScan) Name() string { return "TypedScan" }

// owned is the base of a type whose records belong to an owner (the tenant
// mixins) and are read through the graph with a Relay connection.
type owned struct{ ent.Schema }

func (owned) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, OwnerMixin{}, TimeMixin{}} }

func (owned) Annotations() []schema.Annotation { return readable() }

// ownedHidden is the base of an owner's records that the service keeps out
// of the graph.
type ownedHidden struct{ owned }

func (ownedHidden) Annotations() []schema.Annotation { return hidden() }

// system is the base of a type only the service itself reads and writes:
// out of the graph, and denied to every viewer.
type system struct{ ent.Schema }

func (system) Annotations() []schema.Annotation { return hidden() }

func (system) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{privacy.AlwaysDenyRule()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}

// derived is the base of the counts that database triggers keep
// (internal/database): out of the graph, read by owner like every owned
// record, written only by the triggers.
type derived struct{ ent.Schema }

// Edges of a derived type: the owner, so that removing an owner's rows
// (TRUNCATE ... CASCADE included) removes its counts too.
func (derived) Edges() []ent.Edge { return []ent.Edge{ownerEdge()} }

func (derived) Annotations() []schema.Annotation { return hidden() }

func (derived) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.FilterOwner()},
		Mutation: privacy.MutationPolicy{privacy.AlwaysDenyRule()},
	}
}
