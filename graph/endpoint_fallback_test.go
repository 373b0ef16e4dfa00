package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/requestid"
)

// TestEveryAnswerIsJSON: the requests no GraphQL transport serves are
// answered like every other error, in JSON with extensions.code and
// requestId: 415 for an unsupported Content-Type, 406 for an Accept the
// endpoint cannot satisfy, 400 for an upgrade it does not serve; and every
// answer says Cache-Control: no-store.
func TestEveryAnswerIsJSON(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		h := requestid.Middleware()(w.h) // as the router mounts it
		for _, tc := range []struct {
			name, method, target, contentType, accept, upgrade, body string
			status                                                   int
			code                                                     string
		}{
			{"application/graphql", http.MethodPost, "/graphql", "application/graphql", "", "", `{ viewer { ownerID } }`, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
			{"text/plain", http.MethodPost, "/graphql", "text/plain", "", "", `{"query":"{ viewer { ownerID } }"}`, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
			{"no Content-Type", http.MethodPost, "/graphql", "", "", "", `{"query":"{ viewer { ownerID } }"}`, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"},
			{"event stream on GET", http.MethodGet, "/graphql?query=%7Bviewer%7BownerID%7D%7D", "", "text/event-stream", "", "", http.StatusNotAcceptable, "NOT_ACCEPTABLE"},
			{"only HTML", http.MethodPost, "/graphql", "application/json", "text/html", "", `{"query":"{ viewer { ownerID } }"}`, http.StatusNotAcceptable, "NOT_ACCEPTABLE"},
			{"an upgrade to h2c", http.MethodGet, "/graphql", "", "", "h2c", "", http.StatusBadRequest, "BAD_REQUEST"},
			{"a query", http.MethodPost, "/graphql", "application/json", "", "", `{"query":"{ viewer { ownerID } }"}`, http.StatusOK, ""},
		} {
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+w.tokA)
			for k, v := range map[string]string{"Content-Type": tc.contentType, "Accept": tc.accept, "Upgrade": tc.upgrade} {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			if tc.upgrade != "" {
				req.Header.Set("Connection", "Upgrade")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var r struct {
				Errors []struct {
					Message    string
					Extensions map[string]any
				}
			}
			err := json.Unmarshal(rec.Body.Bytes(), &r)
			if rec.Code != tc.status || err != nil || !strings.Contains(rec.Header().Get("Content-Type"), "json") {
				t.Errorf("%s: %d %s %s; want %d in JSON", tc.name, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tc.status)
				continue
			}
			if rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("%s: Cache-Control %q; want no-store", tc.name, rec.Header().Get("Cache-Control"))
			}
			if tc.code == "" {
				if len(r.Errors) != 0 {
					t.Errorf("%s: errors %+v", tc.name, r.Errors)
				}
				continue
			}
			if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != tc.code || r.Errors[0].Extensions["requestId"] == nil {
				t.Errorf("%s: %s; want one error %s with a requestId", tc.name, rec.Body.String(), tc.code)
			}
		}
	})
}
