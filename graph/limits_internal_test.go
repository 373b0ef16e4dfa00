package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/ratelimit"
)

// BenchmarkLimits is what the limits add to a GraphQL request whose
// document is cached (the hot path): the cache lookup before parsing, the
// complexity of the operation with its variables, and the rate-limit
// meter with its headers. The lead's W1 (a page of 50 materials, 16
// fields) is the shape.
func BenchmarkLimits(b *testing.B) {
	es := generated.NewExecutableSchema(generated.Config{Resolvers: NewResolver(nil)})
	const q = `query W1($c: ID!) { materialsPage(categoryId: $c, perPage: 50, page: 1, orderBy: CREATED_AT, order: DESC) { data { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } } }`
	doc, errs := gqlparser.LoadQuery(es.Schema(), q)
	if errs != nil {
		b.Fatal(errs)
	}
	parsed := lru.New[*ast.QueryDocument](10)
	parsed.Add(context.Background(), q, doc)
	ext := &limits{parsed: parsed}
	if err := ext.Validate(es); err != nil {
		b.Fatal(err)
	}
	vars := map[string]any{"c": json.Number("7")}
	op := &graphql.OperationContext{RawQuery: q, Doc: doc, Operation: doc.Operations[0], Variables: vars}
	params := &graphql.RawParams{Query: q, Variables: vars}
	if got := ext.weights.Complexity(op.Operation, vars); got != 1+50*(1+16) {
		b.Fatalf("W1 complexity %d; want %d", got, 1+50*(1+16))
	}
	lim := ratelimit.NewMemory(1 << 30)
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		m := ratelimit.NewMeter(lim, ratelimit.Key(1), h)
		ctx := ratelimit.NewContext(context.Background(), m)
		if err := m.Take(ctx, ratelimit.ReadUnits); err != nil {
			b.Fatal(err)
		}
		if err := ext.MutateOperationParameters(ctx, params); err != nil {
			b.Fatal(err)
		}
		if err := ext.MutateOperationContext(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}
