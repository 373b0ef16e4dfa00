package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/testkit"
)

// BenchmarkW4 measures compare.sh's cell W4 REST in one process: GET
// /orders?per_page=20&page=P, P cycling through 1-50, on the shared
// 200,000-order dataset, so that the CPU a request costs (cpu-ns/op, the
// process's, the database's excluded), its bytes and its allocations can
// be compared across changes of the order page's path without wrk and a
// second core. It runs only when BENCH_DATABASE_URL names a migrated
// PostgreSQL database holding the dataset (as compare.sh builds it:
// `server migrate`, ../shared/bench/load-product.sql, bench/after-load.sql);
// it mints a token there, so it must be a copy of one's own. The token
// is resolved from the cache, as the server's listener lets it.
func BenchmarkW4(b *testing.B) {
	url := os.Getenv("BENCH_DATABASE_URL")
	if url == "" {
		b.Skip("BENCH_DATABASE_URL is not set")
	}
	c, err := database.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(b, tokens, 1)
	// As the server: the revocation listener lets Resolve answer from its
	// cache, without reading the token's record at each request.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	lis, err := pglisten.New(url, log)
	if err != nil {
		b.Fatal(err)
	}
	tokens.Listen(lis, log)
	b.Cleanup(lis.Start(context.Background()))
	for deadline := time.Now().Add(10 * time.Second); !tokens.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the revocation listener did not connect")
		}
	}
	h := New(graph.NewResolver(c), tokens, Options{PublicURL: testPublicURL})
	reqs := make([]*http.Request, 50)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/orders?per_page=20&page="+strconv.Itoa(i+1), nil)
		reqs[i].Header.Set("Authorization", "Bearer "+token)
	}
	b.ReportAllocs()
	start, i := testkit.CPUTime(b), 0
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, reqs[i%len(reqs)])
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s = %d: %s", reqs[i%len(reqs)].URL, w.Code, w.Body)
		}
		i++
	}
	b.ReportMetric(float64(testkit.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
}
