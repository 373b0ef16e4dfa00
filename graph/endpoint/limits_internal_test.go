package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/viewer"
)

// BenchmarkLimits is what the limits add to a GraphQL request whose
// document is cached (the hot path): the cache lookup before parsing, the
// complexity of the operation with its variables, and the rate-limit
// meter with its headers (one take). The lead's W1 (a page of 50 materials, 16
// fields) is the shape.
func BenchmarkLimits(b *testing.B) {
	es := generated.NewExecutableSchema(generated.Config{Resolvers: graph.NewResolver(nil)})
	const q = `query W1($c: ID!) { materialsPage(where: {categoryID: $c}, perPage: 50, page: 1, orderBy: CREATED_AT, order: DESC) { data { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } } }`
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
		if err := ext.MutateOperationParameters(ctx, params); err != nil {
			b.Fatal(err)
		}
		if err := ext.MutateOperationContext(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}

// interceptors records which execution hooks an operation reached, as an
// interceptor registered after the limits (a fast path, tracing) would
// see it.
type interceptors struct{ reached []string }

func (*interceptors) ExtensionName() string                   { return "Recorder" }
func (*interceptors) Validate(graphql.ExecutableSchema) error { return nil }

func (i *interceptors) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	i.reached = append(i.reached, "operation")
	return next(ctx)
}

func (i *interceptors) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	i.reached = append(i.reached, "root field")
	return next(ctx)
}

func (i *interceptors) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	i.reached = append(i.reached, "field")
	return next(ctx)
}

// TestLimitsBeforeInterceptors: the limits refuse an operation over a
// document bound, over the complexity limit or over the token's budget
// before any interceptor registered after them runs, so that an
// interceptor added to NewHandler later (a fast path that answers by
// itself) cannot let such an operation through.
func TestLimitsBeforeInterceptors(t *testing.T) {
	parsed := lru.New[*ast.QueryDocument](10)
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: graph.NewResolver(nil)}))
	srv.AddTransport(exchange{})
	srv.SetQueryCache(parsed)
	srv.Use(&limits{parsed: parsed})
	rec := &interceptors{}
	srv.Use(rec)
	srv.SetErrorPresenter(presentError)
	h := meter(ratelimit.NewMemory(3), srv)
	for _, tc := range []struct{ name, query, code string }{
		{"over a document bound", testkit.Aliases(MaxAliases+1, "__typename"), "QUERY_TOO_COMPLEX"},
		{"over the complexity limit", `{ orders(first: 1000) { edges { node { configurator { orders(first: 100) { totalCount } } } } } }`, "QUERY_TOO_COMPLEX"},
		// 1 + 1000 * (1 + 1 + 1) points: 4 units, over a budget of 3.
		{"over the token's budget", `{ orders(first: 1000) { edges { node { id } } } }`, "RATE_LIMITED"},
	} {
		rec.reached = nil
		body, _ := json.Marshal(map[string]string{"query": tc.query})
		r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r = r.WithContext(viewer.NewContext(r.Context(), &viewer.Viewer{TokenID: 1, OwnerID: 1, Kind: viewer.KindOpenAPI}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if !strings.Contains(w.Body.String(), `"code":"`+tc.code+`"`) || len(rec.reached) > 0 {
			t.Errorf("%s: %d %.200s, interceptors reached %v; want %s before any", tc.name, w.Code, w.Body, rec.reached, tc.code)
		}
	}
	// The recorder does see an operation that passes.
	rec.reached = nil
	r := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if len(rec.reached) == 0 {
		t.Errorf("an operation within the limits reached no interceptor")
	}
}
