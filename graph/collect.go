package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/ent"
)

// collector is an ent query that entgql can shape from a GraphQL selection.
type collector[Q any] interface {
	CollectFields(ctx context.Context, satisfies ...string) (Q, error)
}

// eager makes q load the edges its caller will read, and only those.
// Inside a GraphQL operation it hands the selection found at path below
// the current field (for example "data" of a page) to entgql's field
// collection, which loads every selected edge, aliases included, in one
// query per edge, and selects only the selected columns. Called directly,
// as REST does, it applies rest: the edges the v1 answer shows.
func eager[Q collector[Q]](ctx context.Context, q Q, rest func(Q) Q, path ...string) (Q, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return rest(q), nil
	}
	oc := graphql.GetOperationContext(ctx)
	field := fc.Field
	for _, name := range path {
		found := false
		for _, f := range graphql.CollectFields(oc, field.Selections, nil) {
			if f.Name == name {
				field, found = f, true
				break
			}
		}
		if !found {
			return q, nil
		}
	}
	return q.CollectFields(graphql.WithFieldContext(ctx, &graphql.FieldContext{Parent: fc, Field: field}))
}

// loadData is the loader of a page query: eager for the selection of the
// page's "data".
func loadData[Q collector[Q]](ctx context.Context, rest func(Q) Q) func(Q) (Q, error) {
	return func(q Q) (Q, error) { return eager(ctx, q, rest, "data") }
}

// noEdges is the REST loader of the types whose v1 shape shows no edge:
// a material shows category_id and texture_id, not the records.
func noEdges[Q any](q Q) Q { return q }

// restOption loads what REST v1 shows with an option: its parameter_list,
// in position order (the OptionVariation interceptor orders every read).
func restOption(q *ent.ConfiguratorOptionQuery) *ent.ConfiguratorOptionQuery {
	return q.WithVariations()
}

// restOptionSet loads what REST v1 shows with an option set: the ids of
// its options, in position order (the ConfiguratorOption interceptor).
func restOptionSet(q *ent.OptionSetQuery) *ent.OptionSetQuery {
	return q.WithOptions(func(q *ent.ConfiguratorOptionQuery) { q.Select("id") })
}
