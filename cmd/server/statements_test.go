package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/storage"
)

// TestStatementsPerRead counts the SQL statements one request sends, for
// every list and by-id read of both transports, through the whole router
// as serve wires it. The counts are the fewest each answer allows (a page
// and its total in one statement, an order's configurator name in the
// order's, one query per other edge shown, nothing for
// the token once it is cached; a page past the end counts on its own),
// so a change that adds a round trip fails here. On SQLite
// every request also reads its token record (there is no cache to keep
// exact across processes; see internal/auth).
func TestStatementsPerRead(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			appName := ""
			if b.Name == "postgres" {
				appName = "statements_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
				dbURL = withParam(dbURL, "application_name", appName)
			}
			var n atomic.Int64
			c := dbtest.Open(t, dbURL, ent.Log(func(...any) { n.Add(1) }))
			ctx := context.Background()
			if _, err := demo.Seed(ctx, c); err != nil {
				t.Fatal(err)
			}
			tokens := dbtest.Tokens(c.Debug())
			token, _ := dbtest.OpenAPI(t, tokens, 1)
			tokenReads := int64(1)
			if appName != "" {
				log := slog.New(slog.NewTextHandler(io.Discard, nil))
				lis, err := pglisten.New(dbURL, log)
				if err != nil {
					t.Fatal(err)
				}
				tokens.Listen(lis, log)
				t.Cleanup(lis.Start(ctx))
				runCtx, stop := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() { done <- tokens.Run(runCtx, log) }()
				t.Cleanup(func() { stop(); <-done })
				waitListening(t, dbURL, appName)
				tokenReads = 0
			}
			files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
			cfg := &config.Config{PublicURL: "http://localhost", ViewerURL: "http://localhost/share/"}
			h := newRouter(c.Debug(), tokens, cfg, files, slog.New(slog.NewTextHandler(io.Discard, nil)))
			share := shareKey(t, h, token)

			send := func(newReq func() *http.Request) (int64, int, string) {
				h.ServeHTTP(httptest.NewRecorder(), newReq()) // warms the token cache
				n.Store(0)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, newReq())
				return n.Load(), rec.Code, rec.Body.String()
			}
			for _, tc := range []struct {
				name string
				path string // a REST path, or a GraphQL query
				want int64  // statements besides the token's
			}{
				{"REST orders", "/api/open-api/v1/orders?per_page=20&page=2", 1},
				{"REST orders past the end", "/api/open-api/v1/orders?per_page=20&page=9", 2},
				{"REST orders filtered", "/api/open-api/v1/orders?per_page=20&configurator_id=1&start_date=2026-03-01&end_date=2026-03-05&order_by=created_at&order=desc", 1},
				{"REST order", "/api/open-api/v1/orders/1", 1},
				{"REST materials", "/api/open-api/v1/materials?per_page=50&category_id=1", 1},
				{"REST material", "/api/open-api/v1/materials/1", 1},
				{"REST categories", "/api/open-api/v1/materials-categories/list", 1},
				{"REST textures", "/api/open-api/v1/textures", 1},
				{"REST texture", "/api/open-api/v1/textures/1", 1},
				{"REST forms", "/api/open-api/v1/configurator-forms", 1},
				{"REST form", "/api/open-api/v1/configurator-forms/1", 1},
				{"REST form fields", "/api/open-api/v1/configurator-form-fields", 1},
				{"REST form field", "/api/open-api/v1/configurator-form-fields/1", 1},
				{"REST option types", "/api/open-api/v1/configurator-options/types/list", 0},
				{"REST options", "/api/open-api/v1/configurator-options", 2},
				{"REST option", "/api/open-api/v1/configurator-option/1", 2},
				{"REST variations", "/api/open-api/v1/configurator-option-variations?configurator_option_id=1", 2},
				{"REST option sets", "/api/open-api/v1/configurator-option-sets", 2},
				{"REST shared", "/api/open-api/v1/shared/" + share, 4 - tokenReads},
				{"GraphQL ordersPage without pagination", `{ ordersPage(perPage: 20, page: 2) { data { id price status createdAt configurator { id name } } } }`, 2},
				{"GraphQL ordersPage with total", `{ ordersPage(perPage: 20, where: {configuratorID: 1}, startDate: "2026-03-01", endDate: "2026-03-05") { pagination { total } data { id customerDetails configurator { id name } } } }`, 2},
				{"GraphQL order", `{ order(id: 1) { id price configurator { id name } } }`, 2},
				{"GraphQL materialsPage", `{ materialsPage(perPage: 50, where: {categoryID: 1}) { data { id name categoryID textureID } } }`, 1},
				{"GraphQL materialsPage with edges", `{ materialsPage(perPage: -1) { pagination { total } data { id category { id } texture { id } } } }`, 3},
				{"GraphQL material", `{ material(id: 1) { id name color categoryID } }`, 1},
				{"GraphQL categories", `{ materialCategoryList { id title } }`, 1},
				{"GraphQL texture", `{ texture(id: 1) { id name } }`, 1},
				{"GraphQL formFieldsPage", `{ formFieldsPage { pagination { total } data { id } } }`, 1},
				{"GraphQL configuratorOptionsPage", `{ configuratorOptionsPage(perPage: -1) { data { id variations { id } } } }`, 2},
				{"GraphQL configuratorOption", `{ configuratorOption(id: 1) { id title variations { id name selected } } }`, 2},
				{"GraphQL optionVariationList", `{ optionVariationList(configuratorOptionID: 1) { id } }`, 2},
				{"GraphQL optionSetList", `{ optionSetList { id options { id } } }`, 2},
				{"GraphQL relay orders", `{ orders(first: 20) { totalCount edges { node { id configurator { id } } } } }`, 3},
			} {
				t.Run(tc.name, func(t *testing.T) {
					got, code, body := send(func() *http.Request {
						var req *http.Request
						if strings.HasPrefix(tc.path, "/") {
							req = httptest.NewRequest(http.MethodGet, tc.path, nil)
						} else {
							body, _ := json.Marshal(map[string]any{"query": tc.path})
							req = httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
							req.Header.Set("Content-Type", "application/json")
						}
						req.Header.Set("Authorization", "Bearer "+token)
						return req
					})
					if code != http.StatusOK || strings.Contains(body, `"errors"`) {
						t.Fatalf("%d %s", code, body)
					}
					if want := tc.want + tokenReads; got != want {
						t.Errorf("%d statements; want %d", got, want)
					}
				})
			}
		})
	}
}

// shareKey makes a share link with the token and returns its key.
func shareKey(t *testing.T, h http.Handler, token string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"query":     `mutation($o: Map!) { setOptionOverrides(options: $o) { key } }`,
		"variables": map[string]any{"o": map[string]any{"1": map[string]any{"id": 1}}},
	})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r struct {
		Data struct{ SetOptionOverrides struct{ Key string } }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Data.SetOptionOverrides.Key == "" {
		t.Fatalf("setOptionOverrides: %d %s", rec.Code, rec.Body)
	}
	return r.Data.SetOptionOverrides.Key
}
