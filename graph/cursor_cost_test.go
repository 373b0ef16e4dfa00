package graph_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestMalformedCursorIsCheap: bench/cursor.sh's request (a cursor of
// nearly 1 MiB in a variable) is refused with a BAD_REQUEST that names
// the variable, having allocated little more than the body itself: the
// over-long string is found before the body is decoded (which copied it
// twice more, 6 MB in all).
func TestMalformedCursorIsCheap(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		o := dbtest.NewTenant(t, c, "A", "C")
		tokens := dbtest.Tokens(c)
		token, _ := dbtest.Dashboard(t, tokens, o.ID)
		h := endpoint.NewHandler(graph.NewResolver(c), tokens, endpoint.HandlerOptions{})
		body := malformedCursorBody(1 << 20)
		var w *httptest.ResponseRecorder
		serve := func() {
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			w = httptest.NewRecorder()
			h.ServeHTTP(w, req)
		}
		serve() // warm: the first request compiles nothing of this one, but fills caches
		least := ^uint64(0)
		var before, after runtime.MemStats
		for range 3 {
			runtime.ReadMemStats(&before)
			serve()
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"BAD_REQUEST"`) || !strings.Contains(w.Body.String(), `\"c\"`) {
			t.Errorf("%d %.300s; want 400 BAD_REQUEST naming the variable c", w.Code, w.Body)
		}
		if limit := uint64(len(body)) * 3 / 2; least > limit {
			t.Errorf("a request of %d bytes allocated %d; want at most %d", len(body), least, limit)
		}
	})
}
