package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/valid"
)

// TestHTTPStatuses checks the statuses and bodies of the GraphQL over HTTP
// specification that the audit (cmd/server TestGraphQLOverHTTPAudit) does
// not cover or that this service adds: each kind of failure, with each
// answer media type.
func TestHTTPStatuses(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		const gqlResponse = "application/graphql-response+json"
		for _, tc := range []struct {
			name           string
			method, accept string
			token          string
			body           string // POST body or GET query string
			status         int
			code           string // extensions.code of the first error, "" for none
			data           bool   // whether the answer has a data entry
		}{
			{"ok", "POST", "", w.tokA, `{"query":"{ viewer { ownerID } }"}`, 200, "", true},
			{"ok, graphql-response", "POST", gqlResponse, w.tokA, `{"query":"{ viewer { ownerID } }"}`, 200, "", true},
			{"resolver error", "POST", gqlResponse, w.tokA, `{"query":"{ order(id: 999999) { id } }"}`, 200, "NOT_FOUND", true},
			{"parse error", "POST", "application/json", w.tokA, `{"query":"{"}`, 200, "GRAPHQL_PARSE_FAILED", false},
			{"parse error, graphql-response", "POST", gqlResponse, w.tokA, `{"query":"{"}`, 400, "GRAPHQL_PARSE_FAILED", false},
			{"validation error", "POST", "", w.tokA, `{"query":"{ nope }"}`, 200, "GRAPHQL_VALIDATION_FAILED", false},
			{"variable error, graphql-response", "POST", gqlResponse, w.tokA,
				`{"query":"query($p: Int) { ordersPage(page: $p) { data { id } } }","variables":{"p":"x"}}`, 400, "GRAPHQL_VALIDATION_FAILED", false},
			{"no query", "POST", "application/json", w.tokA, `{"variables":{}}`, 400, "BAD_REQUEST", false},
			{"not JSON", "POST", "application/json", w.tokA, `query`, 400, "BAD_REQUEST", false},
			{"anonymous", "POST", "", "", `{"query":"{ viewer { ownerID } }"}`, 401, "UNAUTHENTICATED", false},
			{"anonymous, graphql-response", "POST", gqlResponse, "", `{"query":"{ viewer { ownerID } }"}`, 401, "UNAUTHENTICATED", false},
			{"bad token", "POST", "", "nope", `{"query":"{ viewer { ownerID } }"}`, 401, "UNAUTHENTICATED", false},
			{"too large", "POST", "", w.tokA, `{"query":"{ __typename }","x":"` + strings.Repeat("x", valid.MaxJSONBody) + `"}`, 413, "PAYLOAD_TOO_LARGE", false},
			{"GET query", "GET", "", w.tokA, "query=" + url.QueryEscape("{ viewer { ownerID } }"), 200, "", true},
			{"GET mutation", "GET", "", w.tokA, "query=" + url.QueryEscape("mutation { deleteMaterial(id: 1) }"), 405, "METHOD_NOT_ALLOWED", false},
			{"GET without query", "GET", gqlResponse, w.tokA, "", 400, "BAD_REQUEST", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var req *http.Request
				if tc.method == "GET" {
					req = httptest.NewRequest(http.MethodGet, "/graphql?"+tc.body, nil)
				} else {
					req = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tc.body))
					req.Header.Set("Content-Type", "application/json")
				}
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				if tc.token != "" {
					req.Header.Set("Authorization", "Bearer "+tc.token)
				}
				rec := httptest.NewRecorder()
				w.h.ServeHTTP(rec, req)
				var body struct {
					Errors []struct {
						Extensions struct{ Code string }
					}
				}
				var entries map[string]json.RawMessage
				if json.Unmarshal(rec.Body.Bytes(), &body) != nil || json.Unmarshal(rec.Body.Bytes(), &entries) != nil {
					t.Fatalf("not JSON: %s", rec.Body)
				}
				_, hasData := entries["data"]
				code := ""
				if len(body.Errors) > 0 {
					code = body.Errors[0].Extensions.Code
				}
				if rec.Code != tc.status || code != tc.code || hasData != tc.data {
					t.Errorf("= %d, code %q, data entry %v; want %d, %q, %v: %s", rec.Code, code, hasData, tc.status, tc.code, tc.data, rec.Body)
				}
				wantType := "application/json"
				if tc.accept == gqlResponse {
					wantType = gqlResponse
				}
				if ct := rec.Header().Get("Content-Type"); ct != wantType {
					t.Errorf("Content-Type %q; want %q", ct, wantType)
				}
				if tc.status == 401 && rec.Header().Get("WWW-Authenticate") == "" {
					t.Errorf("a 401 without WWW-Authenticate")
				}
				if tc.status == 405 && rec.Header().Get("Allow") != "POST" {
					t.Errorf("a 405 with Allow %q; want POST", rec.Header().Get("Allow"))
				}
			})
		}
	})
}
