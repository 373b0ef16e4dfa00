package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/query"
)

// Read is what the caller of a read will present, so that the read loads
// that and no more. GraphQL derives it from the field's selection
// (selection); REST states it (V1, given to the root it calls through
// Presenting). No read guesses who called it.
type Read struct {
	// Total counts a page's total, for its pagination.
	Total bool
	// Edges loads what REST v1 shows of a record beside its columns: each
	// read names its own (an order's configurator name, an option's
	// variations, the ids of an option set's options).
	Edges bool
	// fields is the GraphQL selection of the records read, which entgql's
	// field collection loads: every selected edge, aliases included, in one
	// query per edge, and only the selected columns.
	fields *graphql.FieldContext
}

// V1 is what REST v1 presents: the total of every page, and the edges its
// shapes show.
var V1 = Read{Total: true, Edges: true}

// Presenting returns a root whose reads load what rd states instead of
// what a GraphQL selection asks for; REST v1 calls the resolvers through
// one (rest.New), GraphQL through the root itself.
func (r *Resolver) Presenting(rd Read) *Resolver {
	c := *r
	c.presents = &rd
	return &c
}

// read is what the current read presents: what the root was given
// (Presenting), or else what the GraphQL selection asks for.
func (r *Resolver) read(ctx context.Context, path ...string) Read {
	if r.presents != nil {
		return *r.presents
	}
	return selection(ctx, path...)
}

// selection is what the GraphQL selection of the current field asks for:
// its records are those selected at path below it (for example "data" of
// a page; none when the path is not selected), and a page's total is
// counted when the field selects "pagination". Outside an operation
// nothing is selected.
func selection(ctx context.Context, path ...string) Read {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return Read{}
	}
	oc := graphql.GetOperationContext(ctx)
	var rd Read
	field := fc.Field
	for i, name := range path {
		found := false
		for _, f := range graphql.CollectFields(oc, field.Selections, nil) {
			rd.Total = rd.Total || i == 0 && f.Name == "pagination"
			if !found && f.Name == name {
				field, found = f, true
			}
		}
		if !found {
			return rd
		}
	}
	rd.fields = &graphql.FieldContext{Parent: fc, Field: field}
	return rd
}

// collector is an ent query that entgql can shape from a GraphQL selection.
type collector[Q any] interface {
	CollectFields(ctx context.Context, satisfies ...string) (Q, error)
}

// load makes q load what rd presents: the selected fields (of a query
// entgql can shape; any other loads its columns), or with Edges what v1
// loads (the edges the v1 shape of the record shows).
func load[Q any](ctx context.Context, rd Read, q Q, v1 func(Q) Q) (Q, error) {
	if c, ok := any(q).(collector[Q]); ok && rd.fields != nil {
		return c.CollectFields(graphql.WithFieldContext(ctx, rd.fields))
	}
	if rd.Edges {
		return v1(q), nil
	}
	return q, nil
}

// one is the record of q, a query by id, loaded as rd says (load), or
// NotFound naming what was sought.
func one[T any, Q interface {
	Only(context.Context) (*T, error)
}](ctx context.Context, rd Read, q Q, v1 func(Q) Q, what string, id int) (*T, error) {
	q, err := load(ctx, rd, q, v1)
	if err != nil {
		return nil, err
	}
	return query.One[T](ctx, q, what, id)
}

// noEdges is the v1 loader of the types whose v1 shape shows no edge:
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
