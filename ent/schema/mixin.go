// Package schema is the hand-written data model; everything else under ent/
// is generated from it.
package schema

import (
	"slices"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/rule"
)

// IDMixin declares the integer primary key explicitly so that lists can be
// ordered by it (REST order_by=id, GraphQL orderBy: ID).
type IDMixin struct{ mixin.Schema }

// Fields of the IDMixin.
func (IDMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Int("id").Positive().Immutable().Annotations(entgql.OrderField("ID")),
	}
}

// TimeMixin adds server-set creation and update times; clients never set them.
type TimeMixin struct{ mixin.Schema }

// Fields of the TimeMixin.
func (TimeMixin) Fields() []ent.Field {
	skip := entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)
	return []ent.Field{
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT"), skip),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now).
			Annotations(entgql.OrderField("UPDATED_AT"), skip),
	}
}

// OwnerMixin makes a record belong to a tenant. The owner is never exposed
// nor settable through the graph: it is taken from the viewer, and the
// tenancy policy filters every query and mutation by it.
type OwnerMixin struct{ mixin.Schema }

// Fields of the OwnerMixin.
func (OwnerMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Int("owner_id").Immutable().Annotations(entgql.Skip()),
	}
}

// Edges of the OwnerMixin.
func (OwnerMixin) Edges() []ent.Edge {
	return []ent.Edge{
		ownerEdge(),
	}
}

// Indexes of the OwnerMixin: every list is filtered by owner and, by
// default, sorted by creation time with id breaking ties, in either
// direction (a B-tree is read both ways).
func (OwnerMixin) Indexes() []ent.Index {
	return sortIndexes("created_at")
}

// sortIndexes are the indexes of an owner's list sorted by each of
// columns: owner_id, then the column, then id, the tie-break every list
// sorts by (once, for id itself). With them a page is read in order and a
// count is an index-only scan, whatever the size of the table.
func sortIndexes(columns ...string) []ent.Index {
	out := make([]ent.Index, len(columns))
	for i, c := range columns {
		out[i] = index.Fields(slices.Compact([]string{"owner_id", c, "id"})...)
	}
	return out
}

// filterIndex is the index of an owner's list filtered by column and
// sorted by creation time: column leads, so that it also serves the
// foreign key's own look-ups.
func filterIndex(column string) ent.Index {
	return index.Fields(column, "owner_id", "created_at", "id")
}

// Policy of the OwnerMixin: tenancy for every read and write, and writes
// may only point at records the viewer can see.
func (OwnerMixin) Policy() ent.Policy {
	return privacy.Policy{
		Query:    privacy.QueryPolicy{rule.AllowSharedRead(), rule.FilterOwner()},
		Mutation: privacy.MutationPolicy{rule.FilterOwner(), rule.ReferencesVisible()},
	}
}

// Hooks of the OwnerMixin.
func (OwnerMixin) Hooks() []ent.Hook {
	return []ent.Hook{rule.SetOwner(), rule.ValidText()}
}
