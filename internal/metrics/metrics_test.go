package metrics_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/vektah/gqlparser/v2/ast"
	_ "modernc.org/sqlite"

	"github.com/configurator/catalogue/internal/metrics"
)

// router is a small service shaped like the real one: a top-level route
// with an id, a mounted sub-router, a GraphQL-like endpoint whose handler
// names its operation through the extension, and routes reporting the
// other events.
func router(m *metrics.Metrics) http.Handler {
	r := chi.NewRouter()
	r.Use(m.Middleware)
	r.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) {})
	r.Delete("/items/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	api := chi.NewRouter()
	api.Get("/things/{id}", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusNotFound) })
	api.Post("/limited", func(w http.ResponseWriter, r *http.Request) {
		metrics.NoteRateLimited(r.Context())
		w.WriteHeader(http.StatusTooManyRequests)
	})
	api.Post("/replayed", func(w http.ResponseWriter, r *http.Request) {
		metrics.NoteReplayed(r.Context())
		w.WriteHeader(http.StatusCreated)
	})
	r.Mount("/api", api)
	r.Post("/graphql", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var ext metrics.GraphQL
		ext.MutateOperationParameters(ctx, &graphql.RawParams{})
		switch name := r.URL.Query().Get("op"); name {
		case "!invalid":
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		case "!anonymous":
			ext.MutateOperationContext(ctx, &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Mutation}})
		default:
			ext.MutateOperationContext(ctx, &graphql.OperationContext{Operation: &ast.OperationDefinition{Name: name, Operation: ast.Query}})
		}
		metrics.NoteCost(ctx, 42)
	})
	r.Handle("/metrics", m.Handler())
	return r
}

func do(t *testing.T, h http.Handler, method, path string) {
	t.Helper()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, path, nil))
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %q; want 200 in the text format", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec.Body.String()
}

// value returns the sample of the series whose name and labels, sorted as
// the text format writes them, are given; -1 when it is absent.
func value(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			fmt.Sscan(rest, &v)
			return v
		}
	}
	return -1
}

func TestMiddlewareLabels(t *testing.T) {
	m := metrics.New()
	h := router(m)
	do(t, h, http.MethodGet, "/items/42")
	do(t, h, http.MethodGet, "/items/43")
	do(t, h, http.MethodDelete, "/items/44")
	do(t, h, "BREW", "/items/45")
	do(t, h, "BREW2", "/items/46")
	do(t, h, http.MethodGet, "/api/things/7")
	do(t, h, http.MethodGet, "/nowhere/8")
	do(t, h, http.MethodPost, "/api/limited")
	do(t, h, http.MethodPost, "/api/replayed")
	do(t, h, http.MethodPost, "/api/replayed")
	text := scrape(t, h)

	for _, tc := range []struct {
		series string
		want   float64
	}{
		{`http_requests_total{method="GET",route="/items/{id}",status="200"}`, 2},
		{`http_requests_total{method="DELETE",route="/items/{id}",status="204"}`, 1},
		{`http_requests_total{method="OTHER",route="unmatched",status="405"}`, 2},
		{`http_requests_total{method="GET",route="/api/things/{id}",status="404"}`, 1},
		{`http_requests_total{method="GET",route="unmatched",status="404"}`, 1},
		{`http_request_duration_seconds_count{method="GET",route="/items/{id}",status="200"}`, 2},
		{`http_request_duration_seconds_bucket{method="GET",route="/items/{id}",status="200",le="+Inf"}`, 2},
		{`http_rate_limited_total{route="/api/limited"}`, 1},
		{`http_idempotent_replays_total{route="/api/replayed"}`, 2},
	} {
		if got := value(text, tc.series); got != tc.want {
			t.Errorf("%s = %v; want %v", tc.series, got, tc.want)
		}
	}
	// Ids are never label values.
	if regexp.MustCompile(`route="[^"]*\d`).MatchString(text) {
		t.Errorf("a route label holds a raw path:\n%s", grep(text, "route="))
	}
	for _, family := range []string{"go_goroutines", "go_gc_duration_seconds", "process_cpu_seconds_total", "go_build_info"} {
		if !strings.Contains(text, "\n"+family) {
			t.Errorf("the scrape has no %s", family)
		}
	}
}

func TestGraphQLOperations(t *testing.T) {
	m := metrics.New()
	h := router(m)
	do(t, h, http.MethodPost, "/graphql?op=Orders")
	do(t, h, http.MethodPost, "/graphql?op=Orders")
	do(t, h, http.MethodPost, "/graphql?op=!anonymous")
	do(t, h, http.MethodPost, "/graphql?op=!invalid")
	do(t, h, http.MethodPost, "/graphql?op="+strings.Repeat("Long", 30))
	text := scrape(t, h)
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{`graphql_requests_total{operation="Orders",status="200",type="query"}`, 2},
		{`graphql_requests_total{operation="anonymous",status="200",type="mutation"}`, 1},
		{`graphql_requests_total{operation="invalid",status="422",type="unknown"}`, 1},
		{`graphql_requests_total{operation="other",status="200",type="query"}`, 1},
		{`graphql_request_duration_seconds_count{operation="Orders",status="200",type="query"}`, 2},
		{`graphql_operation_cost_sum{operation="Orders",type="query"}`, 84},
		{`http_requests_total{method="POST",route="/graphql",status="200"}`, 4},
	} {
		if got := value(text, tc.series); got != tc.want {
			t.Errorf("%s = %v; want %v", tc.series, got, tc.want)
		}
	}
}

// TestOperationCap: past MaxOperations distinct names, new names are
// counted as "other", so clients cannot grow the series without end.
func TestOperationCap(t *testing.T) {
	m := metrics.New()
	h := router(m)
	extra := 5
	for i := 0; i < metrics.MaxOperations+extra; i++ {
		do(t, h, http.MethodPost, fmt.Sprintf("/graphql?op=Op%d", i))
	}
	do(t, h, http.MethodPost, "/graphql?op=Op0") // admitted earlier: keeps its name
	text := scrape(t, h)
	names := regexp.MustCompile(`graphql_requests_total\{operation="Op\d+"`).FindAllString(text, -1)
	if len(names) != metrics.MaxOperations {
		t.Errorf("%d operation names became labels; want the cap, %d", len(names), metrics.MaxOperations)
	}
	if got := value(text, `graphql_requests_total{operation="other",status="200",type="query"}`); got != float64(extra) {
		t.Errorf("operations past the cap counted as other: %v; want %d", got, extra)
	}
	if got := value(text, `graphql_requests_total{operation="Op0",status="200",type="query"}`); got != 2 {
		t.Errorf("Op0 = %v; want 2", got)
	}
}

func TestWatchDB(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(3)
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	if err := m.WatchDB(db, "catalogue"); err != nil {
		t.Fatal(err)
	}
	text := scrape(t, router(m))
	for series, want := range map[string]float64{
		`go_sql_max_open_connections{db_name="catalogue"}`: 3,
		`go_sql_open_connections{db_name="catalogue"}`:     1,
		`go_sql_idle_connections{db_name="catalogue"}`:     1,
		`go_sql_in_use_connections{db_name="catalogue"}`:   0,
		`go_sql_wait_count_total{db_name="catalogue"}`:     0,
	} {
		if got := value(text, series); got != want {
			t.Errorf("%s = %v; want %v", series, got, want)
		}
	}
}

// TestHooksOutsideRequests: the hooks are safe where no request is
// measured (background work, tests calling handlers directly).
func TestHooksOutsideRequests(t *testing.T) {
	ctx := context.Background()
	metrics.NoteRateLimited(ctx)
	metrics.NoteReplayed(ctx)
	metrics.NoteCost(ctx, 1)
	metrics.GraphQL{}.MutateOperationParameters(ctx, &graphql.RawParams{})
	metrics.GraphQL{}.MutateOperationContext(ctx, &graphql.OperationContext{})
}

func grep(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// discard is a ResponseWriter that keeps nothing, so the benchmark
// measures the router and the middleware only.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkMiddleware serves a request on a mounted route with an id, as
// REST's are, through chi behind an outer middleware that does what the
// server's request-id and request-log middlewares do (copy the request
// with a new context, wrap the writer): "bare" without metrics, "metrics"
// with the note in that context and the metrics middleware. The
// difference is what metrics cost per request.
func BenchmarkMiddleware(b *testing.B) {
	build := func(m *metrics.Metrics) http.Handler {
		r := chi.NewRouter()
		r.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx := context.WithValue(r.Context(), idKey{}, "id")
				if m != nil {
					ctx = metrics.NewContext(ctx)
				}
				next.ServeHTTP(middleware.NewWrapResponseWriter(w, r.ProtoMajor), r.WithContext(ctx))
			})
		})
		if m != nil {
			r.Use(m.Middleware)
		}
		api := chi.NewRouter()
		api.Get("/orders/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") })
		r.Mount("/api/open-api/v1", api)
		return r
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"bare", build(nil)}, {"metrics", build(metrics.New())}} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/open-api/v1/orders/42", nil)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				tc.h.ServeHTTP(w, req)
			}
		})
	}
}

type idKey struct{}

// BenchmarkMiddlewareAlone is the middleware as the only one, so it
// copies the request and wraps the writer itself.
func BenchmarkMiddlewareAlone(b *testing.B) {
	r := chi.NewRouter()
	r.Use(metrics.New().Middleware)
	r.Get("/orders/{id}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{}") })
	req := httptest.NewRequest(http.MethodGet, "/orders/42", nil)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		r.ServeHTTP(w, req)
	}
}
