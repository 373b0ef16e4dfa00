package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// collector is an ent query that entgql can shape from a GraphQL selection.
type collector[Q any] interface {
	CollectFields(ctx context.Context, satisfies ...string) (Q, error)
}

// eager makes q load the edges its caller will read. Inside a GraphQL
// operation it hands the selection found at path below the current field
// (for example "data" of a page) to entgql's field collection, which loads
// every selected edge, aliases included, in one query per edge. Called
// directly, as REST does, it applies rest: the edges REST presents.
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

// noEdges is the rest loader of types whose REST shape has no edges.
func noEdges[Q any](q Q) Q { return q }
