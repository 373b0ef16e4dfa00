package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

// limited points the fixture's server and GraphQL handler at handlers
// that share one limiter of limit units a minute, as cmd/server wires
// them.
func (f *fixture) limited(t *testing.T, limit int) {
	lim := ratelimit.NewMemory(limit)
	res := graph.NewResolver(f.c, graph.WithFiles(f.files), graph.WithShareBase(testShareBase))
	r := chi.NewRouter()
	r.Mount(Prefix, New(res, f.tokens, Options{PublicURL: testPublicURL, Limiter: lim}))
	f.handler = r
	f.srv = httptest.NewServer(r)
	t.Cleanup(f.srv.Close)
	f.gql = endpoint.NewHandler(res, f.tokens, endpoint.HandlerOptions{Limiter: lim})
}

// TestRateLimitREST: REST requests cost what they read, per_page=-1 its
// ceiling's rows, writes more; REST and GraphQL draw on one budget per token;
// over budget is 429 with Retry-After in the endpoint's error format.
func TestRateLimitREST(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		f.limited(t, 60)
		left := 60
		check := func(name string, status int, h http.Header, wantStatus, cost int) {
			t.Helper()
			left -= cost
			if status != wantStatus {
				t.Errorf("%s: status %d; want %d", name, status, wantStatus)
			}
			if h.Get("RateLimit-Limit") != "60" || h.Get("RateLimit-Reset") == "" {
				t.Errorf("%s: RateLimit headers %v", name, h)
			}
			if got := h.Get("RateLimit-Remaining"); got != strconv.Itoa(left) {
				t.Errorf("%s: RateLimit-Remaining %s; want %d", name, got, left)
			}
		}
		status, h, _ := f.get(t, f.owner1, "/materials")
		check("a read", status, h, 200, 1)
		// per_page=-1 costs the ceiling's 10 units, taken when it
		// arrives, whatever it returns or however it fails.
		status, h, _ = f.get(t, f.owner1, "/materials?per_page=-1")
		check("per_page=-1 of 25 rows", status, h, 200, 10)
		status, h, _ = f.get(t, f.owner1, "/orders?per_page=%2D01&page=1")
		check("per_page=-1 spelled otherwise, 30 orders", status, h, 200, 10)
		status, h, _ = f.get(t, f.owner1, "/orders?per_page=-1&order_by=colour")
		check("per_page=-1 refused", status, h, 400, 10)
		status, h, _ = f.sendJSON(t, http.MethodPost, "/materials", f.dash1, `{"name":"Teak"}`)
		if status != 201 || h.Get("RateLimit-Remaining") != "49" {
			t.Errorf("a write of another token: %d, remaining %s; want 201 with its own budget, 60 - 11", status, h.Get("RateLimit-Remaining"))
		}
		status, h, _ = f.sendJSON(t, http.MethodPut, "/materials/1", f.owner1, `{"name":"Teak"}`)
		check("a write costs 1 + 10", status, h, 403, 11)
		// GraphQL draws on the same budget.
		f.graphql(t, f.owner1, `{ viewer { ownerID } }`, nil, &struct{}{})
		left--
		status, h, _ = f.get(t, f.owner1, "/materials/1")
		check("after a GraphQL query", status, h, 200, 1)

		// Spend the rest, then every transport refuses.
		for left > 0 {
			status, h, _ = f.get(t, f.owner1, "/configurator-forms")
			check("spending", status, h, 200, 1)
		}
		status, h, body := f.get(t, f.owner1, "/materials")
		var p problem.Body
		if err := json.Unmarshal(body, &p); err != nil || status != 429 || p.Code != "RATE_LIMITED" || h.Get("Content-Type") != "application/problem+json" ||
			h.Get("Retry-After") == "" || h.Get("RateLimit-Remaining") != "0" || !strings.Contains(p.Detail, "rate limit exceeded") {
			t.Errorf("over budget: %d %v %s; want 429 problem+json RATE_LIMITED with Retry-After", status, h, body)
		}
		status, h, body = f.get(t, f.owner1, "/configurator-option-sets")
		var env struct {
			Success *bool
			Message string
		}
		if err := json.Unmarshal(body, &env); err != nil || status != 429 || env.Success == nil || *env.Success || h.Get("Retry-After") == "" {
			t.Errorf("over budget, envelope endpoint: %d %s; want 429 {success: false}", status, body)
		}
		if status, codes := f.graphqlTry(t, f.owner1, `{ viewer { ownerID } }`, nil); status != 429 || len(codes) != 1 || !strings.HasPrefix(codes[0], "RATE_LIMITED") {
			t.Errorf("over budget on GraphQL: %d %v; want 429 RATE_LIMITED", status, codes)
		}
		if status, _, _ := f.get(t, f.owner2, "/materials"); status != 200 {
			t.Errorf("another token: %d; want 200", status)
		}
	})
}

// TestAllPagesPastTheCeiling: per_page=-1 returns every record, as the
// contract says, also past valid.AllPagesCeiling, on both transports; REST
// charges such a list the ceiling's units, however long it is.
func TestAllPagesPastTheCeiling(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		ctx := dbtest.Sys
		bulk := make([]*ent.MaterialCreate, valid.AllPagesCeiling+200)
		for i := range bulk {
			bulk[i] = c.Material.Create().SetOwnerID(1).SetName(fmt.Sprintf("bulk %d", i))
		}
		if err := c.Material.CreateBulk(bulk...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		const rows = 25 + valid.AllPagesCeiling + 200 // the demo's and the bulk
		var page struct {
			MaterialsPage struct{ Data []struct{ ID string } }
		}
		f.graphql(t, f.owner1, `{ materialsPage(perPage: -1) { data { id } } }`, nil, &page)
		if len(page.MaterialsPage.Data) != rows {
			t.Errorf("GraphQL perPage -1 of %d materials: %d rows; want them all", rows, len(page.MaterialsPage.Data))
		}

		// A budget of 23 units: each list takes the ceiling's 10, and the
		// third is refused.
		f.limited(t, 23)
		for i, left := range []string{"13", "3"} {
			var data []map[string]any
			h := f.ok(t, f.owner1, "/materials?per_page=-1", &data)
			if len(data) != rows || h.Get("X-Total-Count") != strconv.Itoa(rows) {
				t.Errorf("list %d, per_page=-1 of %d materials: %d rows, X-Total-Count %s; want them all", i, rows, len(data), h.Get("X-Total-Count"))
			}
			if got := h.Get("RateLimit-Remaining"); got != left {
				t.Errorf("list %d: RateLimit-Remaining %s; want %s", i, got, left)
			}
		}
		status, h, _ := f.get(t, f.owner1, "/materials?per_page=-1")
		if ra, err := strconv.Atoi(h.Get("Retry-After")); status != 429 || err != nil || ra < 7 || h.Get("RateLimit-Remaining") != "3" {
			t.Errorf("a third list with 3 units left: %d, Retry-After %q, remaining %q; want 429, 7 s or more, 3", status, h.Get("Retry-After"), h.Get("RateLimit-Remaining"))
		}
	})
}

func TestAllPages(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"per_page=-1", true},
		{"page=2&per_page=-1", true},
		{"per_page=-01", true},
		{"per_page=%2D1", true},
		{"per%5Fpage=-1", true},
		{"per_page=-1&per_page=5", true},
		{"", false},
		{"per_page=1", false},
		{"per_page=-1.0", false},
		{"per_page=-2", false},
		{"page=-1", false},
		{"per_page", false},
		{"per_page=%zz", false},
		{"xper_page=-1", false},
	} {
		if got := allPages(tc.query); got != tc.want {
			t.Errorf("allPages(%q) = %v; want %v", tc.query, got, tc.want)
		}
	}
}

// BenchmarkCharge is what rate limiting adds to a REST read: the key, the
// meter, the per_page check, a Take and the headers.
func BenchmarkCharge(b *testing.B) {
	h := &handler{limiter: ratelimit.NewMemory(1 << 30)}
	req := httptest.NewRequest(http.MethodGet, Prefix+"/materials?per_page=50&page=1&category_id=7&order_by=created_at&order=desc", nil)
	w := httptest.NewRecorder()
	v := &viewer.Viewer{TokenID: 1}
	b.ReportAllocs()
	for b.Loop() {
		if err := h.charge(w, req, v); err != nil {
			b.Fatal(err)
		}
	}
}

// exerciseRateLimits provokes the 429 of every operation that needs a
// token, through a server whose budget is one unit a minute: the first
// request spends it, and every operation after it is refused before its
// parameters or body are read.
func exerciseRateLimits(t *testing.T, a *apiCheck, f *fixture) {
	saved := a.srv
	defer func() { a.srv, a.revalidate = saved, true }()
	f.limited(t, 1)
	a.srv, a.revalidate = f.srv, false
	a.do(t, exchange{method: http.MethodGet, path: "/configurator-options/types/list", token: f.owner1, want: http.StatusOK})
	var keys []string
	for key, op := range operations(a.doc) {
		if op.Responses.Value("429") != nil {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		method, path, _ := strings.Cut(key, " ")
		path = strings.ReplaceAll(path, "{id}", "1")
		body := a.do(t, exchange{method: method, path: path, token: f.owner1, want: http.StatusTooManyRequests})
		if !strings.Contains(string(body), "rate limit exceeded") {
			t.Errorf("%s: %s; want the rate limit named", key, body)
		}
	}
}
