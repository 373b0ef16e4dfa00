package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/testkit"
)

// BenchmarkList measures the hot REST reads end to end in one process:
// routing, the token, the resolver's query on SQLite (the demo data), and
// the v1 answer; its allocations are the figure to compare across changes
// of the read path, with cpu-ns/op, the process's CPU time per request,
// which a busy machine moves less than the time per request.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	c := dbtest.Open(b, dbtest.Backends()[0].URL(b))
	if _, err := demo.Seed(ctx, c); err != nil {
		b.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(b, tokens, 1)
	h := New(graph.NewResolver(c), tokens, Options{PublicURL: testPublicURL})
	for _, path := range []string{"/orders", "/orders?page=2&per_page=5", "/materials", "/configurator-options", "/orders/1"} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			b.ReportAllocs()
			start := testkit.CPUTime(b)
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s = %d: %s", path, w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(testkit.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
