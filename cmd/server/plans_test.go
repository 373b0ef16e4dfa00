package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/storage"
)

// recorder is an ent driver that keeps the SELECT statements it sends,
// with their arguments, so that the test can ask PostgreSQL how it runs
// them.
type recorder struct {
	dialect.Driver
	mu    sync.Mutex
	stmts []statement
}

type statement struct {
	query string
	args  []any
}

// Query implements dialect.Driver.
func (r *recorder) Query(ctx context.Context, query string, args, v any) error {
	if a, ok := args.([]any); ok && strings.HasPrefix(query, "SELECT") {
		r.mu.Lock()
		r.stmts = append(r.stmts, statement{query, a})
		r.mu.Unlock()
	}
	return r.Driver.Query(ctx, query, args, v)
}

func (r *recorder) take() []statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stmts
	r.stmts = nil
	return s
}

// TestListPlans checks on PostgreSQL that every list of REST v1, in every
// sort order it offers, both directions, with and without its filters,
// reads an index in order (no Sort, no sequential scan) and counts its
// total from an index alone (Index Only Scan): the cost of a page does not
// grow with the number of rows. Sorting and sequential scans are disabled
// for the EXPLAIN, so a missing index shows as a Sort or Seq Scan node
// rather than being hidden by the planner's preference for small tables.
func TestListPlans(t *testing.T) {
	var pg *dbtest.Backend
	for _, b := range dbtest.Backends() {
		if b.Name == "postgres" {
			pg = &b
		}
	}
	if pg == nil {
		t.Skip("needs PostgreSQL (TEST_DATABASE_URL)")
	}
	url := pg.URL(t)
	db := dbtest.SQL(t, url)
	rec := &recorder{Driver: entsql.OpenDB(dialect.Postgres, db)}
	c := ent.NewClient(ent.Driver(rec))
	ctx := context.Background()
	if err := database.Migrate(ctx, c, url); err != nil {
		t.Fatal(err)
	}
	if _, err := demo.Seed(ctx, c); err != nil {
		t.Fatal(err)
	}
	// The visibility map lets the planner answer counts from the index.
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		t.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(t, tokens, 1)
	h := newRouter(c, tokens, &config.Config{PublicURL: "http://localhost", ViewerURL: "http://localhost/share/"},
		&storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, set := range []string{"SET enable_seqscan = off", "SET enable_sort = off", "SET enable_incremental_sort = off"} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}

	lists := []struct {
		path    string
		sorts   []string
		filters []string
	}{
		{"/orders", []string{"", "id", "created_at", "updated_at", "price", "status"},
			[]string{"", "configurator_id=1", "configurator_id=1&start_date=2026-03-02&end_date=2026-03-05", "start_date=2026-03-02"}},
		{"/materials", []string{"", "id", "created_at", "updated_at", "name"}, []string{"", "category_id=1", "texture_id=1"}},
		{"/textures", []string{"", "id", "created_at", "updated_at", "name"}, []string{"", "category_id=1"}},
		{"/configurator-form-fields", []string{"", "id", "created_at", "updated_at", "title", "position"}, []string{""}},
		{"/configurator-options", []string{"", "id", "created_at", "updated_at", "title", "position"}, []string{""}},
		{"/materials-categories/list", []string{"", "id", "created_at", "updated_at", "title"}, []string{""}},
	}
	checked := 0
	for _, l := range lists {
		for _, sort := range l.sorts {
			for _, dir := range []string{"asc", "desc"} {
				for _, filter := range l.filters {
					q := "per_page=5&order=" + dir
					if sort != "" {
						q += "&order_by=" + sort
					}
					if filter != "" {
						q += "&" + filter
					}
					path := "/api/open-api/v1" + l.path + "?" + q
					req := httptest.NewRequest(http.MethodGet, path, nil)
					req.Header.Set("Authorization", "Bearer "+token)
					rw := httptest.NewRecorder()
					rec.take()
					h.ServeHTTP(rw, req)
					if rw.Code != http.StatusOK {
						t.Fatalf("GET %s = %d %s", path, rw.Code, rw.Body)
					}
					for _, s := range rec.take() {
						if strings.Contains(s.query, "api_tokens") {
							continue
						}
						checked++
						for _, p := range plans(t, conn, s) {
							for _, bad := range []string{"Seq Scan", "Sort", "Incremental Sort"} {
								if p.nodes[bad] {
									t.Errorf("GET %s: %s in the %s plan of\n  %s", path, bad, p.kind, s.query)
								}
							}
							if strings.Contains(s.query, "COUNT(*)") && !p.nodes["Index Only Scan"] {
								t.Errorf("GET %s: the count is not an index-only scan in the %s plan:\n  %s", path, p.kind, s.query)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d statements explained", checked)

	// A page after the first walks the sort index alone over the rows it
	// skips (graph.deferredJoin) and reads only its own rows from the
	// table, whatever the page number: the plan has an index-only scan, no sequential scan, and sorts at most
	// the rows of one page. Sequential scans stay disabled: the demo's
	// tables are a few pages long, where the planner prefers them.
	for _, set := range []string{"RESET enable_sort", "RESET enable_incremental_sort"} {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range lists {
		for _, dir := range []string{"asc", "desc"} {
			path := "/api/open-api/v1" + l.path + "?per_page=2&page=3&order=" + dir
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec.take()
			h.ServeHTTP(httptest.NewRecorder(), req)
			deferred := 0
			for _, s := range rec.take() {
				if !strings.Contains(s.query, " OFFSET $") {
					continue
				}
				deferred++
				for _, p := range plans(t, conn, s) {
					if p.nodes["Seq Scan"] || !p.nodes["Index Only Scan"] || p.sorted > 2 {
						t.Errorf("GET %s: want an index-only walk and a sort of at most one page; %s plan nodes %v, sorting %d rows:\n  %s", path, p.kind, p.nodes, p.sorted, s.query)
					}
				}
			}
			if l.path != "/materials-categories/list" && deferred != 1 {
				t.Errorf("GET %s: %d statements skip rows through the index; want 1", path, deferred)
			}
		}
	}
}

// shape is what the test reads of a plan: its node types and the most
// rows the planner expects any Sort node of it to sort.
type shape struct {
	kind   string // "custom" (for the statement's values) or "generic"
	nodes  map[string]bool
	sorted int
}

// plans returns the plan PostgreSQL makes of s for its values, and the
// generic plan it makes once for every execution of the prepared
// statement, which is the one the service runs (plan_cache_mode is
// force_generic_plan on its connections: database.genericPlans).
func plans(t *testing.T, conn *sql.Conn, s statement) []shape {
	t.Helper()
	ctx := context.Background()
	custom := explain(t, conn, "EXPLAIN (FORMAT JSON) "+s.query, s.args...)
	if _, err := conn.ExecContext(ctx, "PREPARE plans_test AS "+s.query); err != nil {
		t.Fatalf("prepare %s: %v", s.query, err)
	}
	defer conn.ExecContext(ctx, "DEALLOCATE plans_test")
	// The values do not matter to a generic plan: NULL for each.
	nulls := strings.TrimSuffix(strings.Repeat("NULL,", len(s.args)), ",")
	if len(s.args) > 0 {
		nulls = "(" + nulls + ")"
	}
	if _, err := conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "RESET plan_cache_mode")
	generic := explain(t, conn, "EXPLAIN (FORMAT JSON) EXECUTE plans_test"+nulls)
	custom.kind, generic.kind = "custom", "generic"
	return []shape{custom, generic}
}

// explain runs an EXPLAIN (FORMAT JSON) statement and reads its plan.
func explain(t *testing.T, conn *sql.Conn, stmt string, args ...any) shape {
	t.Helper()
	var raw []byte
	if err := conn.QueryRowContext(context.Background(), stmt, args...).Scan(&raw); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	var doc []struct{ Plan map[string]any }
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) != 1 {
		t.Fatalf("explain output %s: %v", raw, err)
	}
	nodes, sorted := map[string]bool{}, 0
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		typ := fmt.Sprint(n["Node Type"])
		nodes[typ] = true
		if rows, _ := n["Plan Rows"].(float64); typ == "Sort" && int(rows) > sorted {
			sorted = int(rows)
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(doc[0].Plan)
	return shape{nodes: nodes, sorted: sorted}
}
