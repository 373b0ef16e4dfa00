package cost

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// testSchema has each kind of field Weights prices: Relay connections,
// page queries, lists without a size, scalar lists, the cycle between
// orders and their configurator.
const testSchema = `
type Query {
  viewer: Viewer!
  orders(first: Int, last: Int, after: String): OrderConnection!
  ordersPage(perPage: Int, page: Int): OrderPage!
  order(id: ID!): Order
  categories: [Category!]!
  types: [String!]!
}
type Mutation { createOrder(price: Float!): Order! }
type Viewer { ownerID: ID! }
type OrderConnection { edges: [OrderEdge] totalCount: Int! }
type OrderEdge { node: Order cursor: String! }
type OrderPage { data: [Order!]! total: Int! }
type Order { id: ID! price: Float! configurator: Configurator! printMap: [String!] }
type Configurator { id: ID! orders(first: Int, last: Int): OrderConnection! options: [Option!] }
type Option { id: ID! }
type Category { id: ID! }
`

var testRows = Rows{First: 100, PerPage: 15, AllPages: 1000, List: 20, MaxFirst: 1000, MaxPerPage: 100}

func TestComplexity(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphql", Input: testSchema})
	w := NewWeights(schema, testRows)
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        int
	}{
		{"a field and its selection", `{ viewer { ownerID } }`, nil, 2},
		{"a page query without perPage costs its default", `{ ordersPage { data { id price } } }`, nil, 1 + 15*3},
		{"perPage multiplies the selection", `{ ordersPage(perPage: 50) { data { id } total } }`, nil, 1 + 50*3},
		{"perPage -1 costs its row ceiling", `{ ordersPage(perPage: -1) { data { id } } }`, nil, 1 + 1000*2},
		{"perPage from a variable", `query($n: Int) { ordersPage(perPage: $n) { data { id } } }`, map[string]any{"n": json.Number("20")}, 1 + 20*2},
		{"perPage from a null variable", `query($n: Int) { ordersPage(perPage: $n) { data { id } } }`, map[string]any{"n": nil}, 1 + 15*2},
		{"a connection without first or last", `{ orders { edges { node { id } } } }`, nil, 1 + 100*3},
		{"the larger of first and last", `{ orders(first: 5, last: 7) { edges { node { id } } } }`, nil, 1 + 7*3},
		{"first 0", `{ orders(first: 0) { totalCount } }`, nil, 1},
		{"first over its maximum is the resolver's to refuse", `{ orders(first: 100000) { totalCount } }`, nil, 1},
		{"perPage over its maximum is the resolver's to refuse", `{ ordersPage(perPage: 101) { total } }`, nil, 1},
		{"perPage below -1 is the resolver's to refuse", `{ ordersPage(perPage: -5) { total } }`, nil, 1},
		{"a list without a size", `{ categories { id } }`, nil, 1 + 20},
		{"a list of scalars is one value", `{ types order(id: 1) { printMap } }`, nil, 1 + 2},
		{"an edge list inside a connection is priced by it", `{ order(id: 1) { configurator { orders(first: 10) { edges { node { configurator { id options { id } } } } } } } }`, nil,
			1 + (1 + (1 + 10*(1+(1+(1+1+(1+20)))))),
		},
		{"fragments count where they are spread", `query { ...F a: viewer { ...G } } fragment F on Query { viewer { ownerID } } fragment G on Viewer { ownerID }`, nil, 4},
		{"inline fragments", `{ ... on Query { viewer { ownerID } } }`, nil, 2},
		{"introspection lists are not multiplied", `{ __schema { types { name fields { name } } } }`, nil, 5},
		{"__typename", `{ __typename }`, nil, 1},
		{"mutations", `mutation { createOrder(price: 1) { id configurator { id } } }`, nil, 1 + 1 + 2},
		{"the cycle saturates", `{ orders(first: 1000) { edges { node { configurator { orders(first: 1000) { edges { node { configurator { orders(first: 1000) { edges { node { configurator { orders(first: 1000) { edges { node { id } } } } } } } } } } } } } } } }`, nil, math.MaxInt32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(schema, tc.query)
			if errs != nil {
				t.Fatalf("invalid test query: %v", errs)
			}
			if got := w.Complexity(doc.Operations[0], tc.vars); got != tc.want {
				t.Errorf("Complexity(%s) = %d; want %d", tc.query, got, tc.want)
			}
		})
	}
}

func TestIntValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want int
		ok   bool
	}{
		{"int64", int64(7), 7, true},
		{"int", 7, 7, true},
		{"float", 7.0, 7, true},
		{"json number", json.Number("7"), 7, true},
		{"huge json number", json.Number("99999999999"), math.MaxInt32, true},
		{"huge negative", int64(-99999999999), -math.MaxInt32, true},
		{"not an integer", json.Number("7.5"), 0, true},
		{"null", nil, 0, false},
		{"a string", "7", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &ast.Value{Kind: ast.Variable, Raw: "n"}
			got, ok := intValue(v, map[string]any{"n": tc.v})
			if got != tc.want || ok != tc.ok {
				t.Errorf("intValue(%v) = %d, %v; want %d, %v", tc.v, got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := intValue(nil, nil); ok {
		t.Error("intValue(nil) is ok; want absent")
	}
}

// BenchmarkComplexity is the cost of pricing a typical page query (the
// lead's W1 shape: 50 rows of 15 fields) per request.
func BenchmarkComplexity(b *testing.B) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphql", Input: testSchema})
	w := NewWeights(schema, testRows)
	fields := strings.Repeat("id price ", 7) + "configurator { id }"
	doc, errs := gqlparser.LoadQuery(schema, `query($n: Int) { ordersPage(perPage: $n) { data { `+fields+` } } }`)
	if errs != nil {
		b.Fatal(errs)
	}
	vars := map[string]any{"n": json.Number("50")}
	b.ReportAllocs()
	for b.Loop() {
		w.Complexity(doc.Operations[0], vars)
	}
}
