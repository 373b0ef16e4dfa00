package graph

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/query"
)

// entities is the batched entity resolver of one federation entity type
// (entity.resolvers.go): the records of ids read with one statement of q
// (query.ByIDs), under the privacy rules like every read, loaded as the
// _entities selection asks for them (load: its `... on Type` fragments).
// A record the caller may not see is nil with a NotFound error at its
// index (graphql.BatchErrorList, which gqlgen places at the position of
// its representation); the error of the whole read fails every one.
func entities[T any, Q interface {
	All(context.Context) ([]*T, error)
}](ctx context.Context, rd Read, q Q, ids []int, what string,
	where func(Q, []int) Q, idOf func(*T) int) ([]*T, error) {
	q, err := load(ctx, rd, q, noEdges)
	if err != nil {
		return nil, err
	}
	all := func(ctx context.Context, distinct []int) ([]*T, error) {
		return where(q, distinct).All(ctx)
	}
	recs, errs, err := query.ByIDs(ctx, ids, "representations", what, all, idOf)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return recs, graphql.BatchErrorList(errs)
	}
	return recs, nil
}

// keys are the ids of the representations reps, by key.
func keys[K any](reps []*K, key func(*K) int) []int {
	ids := make([]int, len(reps))
	for i, k := range reps {
		ids[i] = key(k)
	}
	return ids
}
