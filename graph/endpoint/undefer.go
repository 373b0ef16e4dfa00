package endpoint

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// undeferred is gqlgen's query cache with @defer taken out of every
// document it keeps, so that an operation with @defer sent to this
// service directly is answered as one result with the deferred fields in
// it, on every transport (docs/federation.md, "@defer").
//
// gqlgen delivers deferred fragments only as further incremental
// payloads, which no transport here writes: the initial payload alone was
// answered, with the deferred fields null. The incremental-delivery
// proposal lets a server deliver deferred fields in the initial result
// (@defer is a hint), and Apollo Client 4 and urql take a single result
// as the complete one, so the directive is dropped rather than refused.
//
// gqlgen parses and validates a text it does not find in the cache, then
// adds the document and only then runs it: Add is the one point where a
// document is validated (the directive's arguments included) and not yet
// shared with any other request, so it is changed there, in place, once.
type undeferred struct {
	graphql.Cache[*ast.QueryDocument]
}

// Add takes @defer out of doc, then keeps it.
func (u undeferred) Add(ctx context.Context, key string, doc *ast.QueryDocument) {
	for _, op := range doc.Operations {
		undefer(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		undefer(f.SelectionSet)
	}
	u.Cache.Add(ctx, key, doc)
}

// undefer removes @defer from the fragments of set and of its fields'
// selections (a fragment spread's definition is one of doc.Fragments).
func undefer(set ast.SelectionSet) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			undefer(sel.SelectionSet)
		case *ast.InlineFragment:
			sel.Directives = withoutDefer(sel.Directives)
			undefer(sel.SelectionSet)
		case *ast.FragmentSpread:
			sel.Directives = withoutDefer(sel.Directives)
		}
	}
}

// withoutDefer is ds without @defer (ds itself when it has none).
func withoutDefer(ds ast.DirectiveList) ast.DirectiveList {
	if ds.ForName("defer") == nil {
		return ds
	}
	out := make(ast.DirectiveList, 0, len(ds)-1)
	for _, d := range ds {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out
}
