package graph_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/testkit"
)

// BenchmarkGraphQL measures the documents of compare.sh's GraphQL cells
// (../shared/bench/workloads/gql) end to end in one process, as a client
// sends them (the whole text every time): the endpoint's transport, the
// token, gqlgen, the fast path, the resolvers' queries on SQLite (the demo
// data). Its allocations (B/op, allocs/op) are the figure to compare
// across changes of the GraphQL path, with cpu-ns/op, the process's CPU
// time per request; rest's BenchmarkList is the REST side.
func BenchmarkGraphQL(b *testing.B) {
	ctx := context.Background()
	c := dbtest.Open(b, dbtest.Backends()[0].URL(b))
	if _, err := demo.Seed(ctx, c); err != nil {
		b.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(b, tokens, 1)
	h := endpoint.NewHandler(graph.NewResolver(c), tokens, endpoint.HandlerOptions{})
	for _, d := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"W1", `query W1($c: ID!) { materialsPage(where: {categoryID: $c}, perPage: 50, page: 1, orderBy: CREATED_AT, order: DESC) { data { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } } }`, map[string]any{"c": "1"}},
		{"W2", `query W2($id: ID!) { material(id: $id) { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } }`, map[string]any{"id": "3"}},
		{"W4", `query W4($p: Int!) { ordersPage(perPage: 20, page: $p, orderBy: CREATED_AT, order: DESC) { data { id price status createdAt configurator { id name } } } }`, map[string]any{"p": 2}},
		{"W5", `query W5($id: ID!) { configuratorOption(id: $id) { id configuratorID title type settings position createdAt updatedAt createdBy variations { id name position selected modelID materialID materialCategoryID textValue customColor textFontSize textFontFamily textColorCategoryID numericalDefault createdAt updatedAt } } }`, map[string]any{"id": "6"}},
	} {
		b.Run(d.name, func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"query": d.query, "variables": d.vars})
			b.ReportAllocs()
			start := testkit.CPUTime(b)
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) {
					b.Fatalf("%s = %d: %s", d.name, w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(testkit.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkMalformedCursor is bench/cursor.sh's request in one process:
// an `after:` cursor of a msgpack value nested as deep as a 1 MiB body
// allows, sent as a variable to the orders connection, which the
// endpoint must refuse (400, BAD_REQUEST naming the variable) at a cost that
// does not grow with what the client sent beyond reading it.
func BenchmarkMalformedCursor(b *testing.B) {
	c := dbtest.Open(b, dbtest.Backends()[0].URL(b))
	if _, err := demo.Seed(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(b, tokens, 1)
	h := endpoint.NewHandler(graph.NewResolver(c), tokens, endpoint.HandlerOptions{})
	body := malformedCursorBody(1 << 20)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	start := testkit.CPUTime(b)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !bytes.Contains(w.Body.Bytes(), []byte(`"BAD_REQUEST"`)) {
			b.Fatalf("%d: %.300s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(testkit.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
}

// malformedCursorBody is bench/cursor.sh's body of size bytes at most:
// {"query": ..., "variables": {"c": CURSOR}}, CURSOR the unpadded base64
// of a cursor whose sort key is one-element arrays nested to the end.
func malformedCursorBody(size int) []byte {
	const q = "query($c: Cursor) { orders(first: 5, after: $c) { edges { cursor node { id } } } }"
	empty, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]string{"c": ""}})
	room := size - len(empty) - 16
	raw := append([]byte{0x82, 0xa1, 'i', 0x01, 0xa1, 'v'}, bytes.Repeat([]byte{0x91}, room*3/4)...)
	cursor := base64.RawStdEncoding.EncodeToString(raw)
	cursor = cursor[:min(len(cursor), room)]
	cursor = cursor[:len(cursor)-len(cursor)%4]
	body, _ := json.Marshal(map[string]any{"query": q, "variables": map[string]string{"c": cursor}})
	return body
}
