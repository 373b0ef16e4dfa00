package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/testkit"
)

func aliases(n int) string { return testkit.Aliases(n, "__typename") }

// post sends q with the given Accept header and returns the status, the
// response and its headers.
func post(t *testing.T, h http.Handler, token, accept, q string) (int, gqlResponse, http.Header) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	r, header := serveGQL(t, h, req)
	return r.Status, r, header
}

// noData reports whether a response has no data: a request error.
func noData(r gqlResponse) bool { return len(r.Data) == 0 || string(r.Data) == "null" }

const graphQLResponse = "application/graphql-response+json"

// TestDocumentLimits: documents over a bound are refused before they
// run, with QUERY_TOO_COMPLEX, as the GraphQL over HTTP transport answers
// a request that fails before it executes: 400 for a client that accepts
// application/graphql-response+json, 200 for one that accepts only
// application/json, and no data either way.
func TestDocumentLimits(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		for _, tc := range []struct {
			name, query, message string
		}{
			{"fragment fan-out, 10 levels of 10 spreads", testkit.FanOut(10, 10), "the query selects more than 1000 fields (fragments expanded)"},
			{"depth 53 through order -> configurator -> orders", testkit.Cycle(13), "levels deep; the limit is 15"},
			{"1000 aliases", aliases(1000), "more than 100 aliased fields"},
			{"a document over 64 KiB", "{ viewer { ownerID } }" + strings.Repeat(" ", endpoint.MaxDocumentBytes), "the limit is 65536"},
			{"a fragment cycle", `{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`, "spread each other in a cycle"},
			{"an unused operation over a limit", "query Small { viewer { ownerID } } query Big " + aliases(101), "aliased fields"},
			{"a complexity over the limit", `{ orders(first: 1000) { edges { node { configurator { orders(first: 100) { totalCount } } } } } }`,
				"the operation's complexity is 104001; the limit is 50000: ask for fewer rows (first, last, perPage) or fewer fields"},
			{"perPage -1 costs its row ceiling", `{ materialsPage(perPage: -1) { data { id name color status opacity specular reflection surface bump materialType materialFile createdAt updatedAt createdBy categoryID textureID
				category { id title description createdAt updatedAt createdBy materials { id name } } texture { id name } } } }`, "the operation's complexity is 68001"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, accept := range []string{graphQLResponse, "application/json"} {
					status, r, _ := post(t, w.h, w.tokA, accept, tc.query)
					want := map[string]int{graphQLResponse: 400, "application/json": 200}[accept]
					if status != want || r.code() != "QUERY_TOO_COMPLEX" || !strings.Contains(r.Errors[0].Message, tc.message) || !noData(r) {
						t.Errorf("Accept %s: %d %+v; want %d QUERY_TOO_COMPLEX containing %q and no data", accept, status, r.Errors, want, tc.message)
					}
				}
			})
		}
		for _, tc := range []struct{ name, query string }{
			{"fan-out within the limits", testkit.FanOut(2, 10)},
			{"depth 15", testkit.Cycle(3)},
			{"100 aliases", aliases(100)},
			{"perPage -1 of a few fields", `{ materialsPage(perPage: -1) { data { id name category { id title } texture { id name } } } }`},
			{"first 1000", `{ orders(first: 1000) { edges { node { id price status configurator { id name } } } } }`},
			{"first over its maximum is the resolver's argument error", `{ orders(first: 5000) { totalCount } }`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, r, _ := post(t, w.h, w.tokA, graphQLResponse, tc.query)
				if r.code() == "QUERY_TOO_COMPLEX" {
					t.Errorf("%d %+v; want it to run", status, r.Errors)
				}
			})
		}
	})
}

// TestIntrospectionWithinLimits: GraphiQL's introspection query, the
// deepest a tool sends, is within every bound.
func TestIntrospectionWithinLimits(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		status, r, _ := post(t, w.h, w.tokA, graphQLResponse, introspectionQuery)
		if status != 200 || len(r.Errors) > 0 {
			t.Fatalf("introspection: %d %+v", status, r.Errors)
		}
	})
}

// introspectionQuery is GraphiQL's, with its nine levels of ofType.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } } }`

// TestRateLimit: every GraphQL request of a token is charged to its
// budget, ReadUnits at least and its complexity's units when it is known,
// in one take; an operation over budget is 429 RATE_LIMITED with
// Retry-After and takes nothing, and tokens have budgets of their own.
func TestRateLimit(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		lim := &countingLimiter{Limiter: ratelimit.NewMemory(60)}
		h := endpoint.NewHandler(graph.NewResolver(c), w.tokens, endpoint.HandlerOptions{Limiter: lim})
		remaining := func(hd http.Header) int {
			n, err := strconv.Atoi(hd.Get("RateLimit-Remaining"))
			if err != nil || hd.Get("RateLimit-Limit") != "60" || hd.Get("RateLimit-Reset") == "" {
				t.Fatalf("RateLimit headers: %v", hd)
			}
			return n
		}
		for _, tc := range []struct {
			name   string
			query  string
			status int
			left   int
			code   string
		}{
			{"a small query costs 1", `{ viewer { ownerID } }`, 200, 59, ""},
			// 1 + 50 * (1 + 15) = 801 points: 1 unit, as its REST twin.
			{"a page of 50 materials with 15 fields costs 1", `{ materialsPage(perPage: 50) { data { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt } } }`, 200, 58, ""},
			// 1 + 1000 * (1 + 1 + 1 + 3 + 3) = 9001 points: 10 units.
			{"perPage -1 costs its row ceiling", `{ materialsPage(perPage: -1) { data { id name category { id title } texture { id name } } } }`, 200, 48, ""},
			{"a malformed request costs 1", `{ viewer { ownerID `, 200, 47, "GRAPHQL_PARSE_FAILED"},
			{"a refused document costs 1", aliases(101), 200, 46, "QUERY_TOO_COMPLEX"},
			// 1 + 1000 * (1 + (1 + 1 + 2 * (1 + 1 + (1 + 20)))) = 49001
			// points: 50 units, refused whole.
			{"an operation over what is left", `{ orders(first: 1000) { edges { node { id
				a: configurator { id options { id } } b: configurator { id options { id } } } } } }`, 429, 46, "RATE_LIMITED"},
			// 1 point and a write: 11 units.
			{"a mutation costs its write", `mutation { deleteMaterial(id: 999999) }`, 200, 35, "*"},
		} {
			calls := lim.calls.Load()
			status, r, hd := post(t, h, w.tokA, "", tc.query)
			// One call of the limiter per request: one round trip to Redis.
			if n := lim.calls.Load() - calls; n != 1 {
				t.Errorf("%s: %d calls of the limiter; want 1", tc.name, n)
			}
			if status != tc.status || (tc.code != "*" && r.code() != tc.code) {
				t.Errorf("%s: %d %+v; want %d %s", tc.name, status, r.Errors, tc.status, tc.code)
			}
			if got := remaining(hd); got != tc.left {
				t.Errorf("%s: RateLimit-Remaining %d; want %d", tc.name, got, tc.left)
			}
			if tc.status == 429 {
				if ra, err := strconv.Atoi(hd.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
					t.Errorf("%s: Retry-After %q; want 1 to 60 seconds", tc.name, hd.Get("Retry-After"))
				}
				if !strings.Contains(r.Errors[0].Message, "rate limit exceeded: this request costs 50 units and the token has 46 of its 60 a minute left") || !noData(r) {
					t.Errorf("%s: %+v, data %s; want the cost named and no data", tc.name, r.Errors, r.Data)
				}
			}
		}
		// Spend the rest: the next request is refused, and so is a
		// malformed one.
		for i := 0; i < 35; i++ {
			post(t, h, w.tokA, "", `{ viewer { ownerID } }`)
		}
		status, r, hd := post(t, h, w.tokA, "", `{ viewer { ownerID } }`)
		if status != 429 || r.code() != "RATE_LIMITED" || hd.Get("Retry-After") == "" || remaining(hd) != 0 {
			t.Errorf("after the budget is spent: %d %+v %v; want 429 RATE_LIMITED with Retry-After", status, r.Errors, hd)
		}
		status, r, hd = post(t, h, w.tokA, "", `{ viewer { ownerID `)
		if status != 429 || r.code() != "RATE_LIMITED" || hd.Get("Retry-After") == "" {
			t.Errorf("a malformed request after the budget is spent: %d %+v %v; want 429 RATE_LIMITED with Retry-After", status, r.Errors, hd)
		}
		if status, _, hd := post(t, h, w.tokB, "", `{ viewer { ownerID } }`); status != 200 || remaining(hd) != 59 {
			t.Errorf("another token: %d, remaining %s; want 200 with its own budget", status, hd.Get("RateLimit-Remaining"))
		}
		// Anonymous requests (introspection) are not metered.
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("RateLimit-Limit") != "" {
			t.Errorf("anonymous: %d %v; want 200 without RateLimit headers", rec.Code, rec.Header())
		}
	})
}

// countingLimiter counts the calls of the limiter it wraps.
type countingLimiter struct {
	ratelimit.Limiter
	calls atomic.Int64
}

func (c *countingLimiter) Allow(ctx context.Context, key string, n int) (ratelimit.Status, error) {
	c.calls.Add(1)
	return c.Limiter.Allow(ctx, key, n)
}
