package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/requestid"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/telemetry"
	"github.com/configurator/catalogue/internal/testkit"
)

// observed is the real router over a demo database, with a token, and
// the log lines it wrote.
type observed struct {
	h     http.Handler
	token string
	logs  *testkit.SyncBuffer
}

func newObserved(t *testing.T, c *ent.Client) observed {
	t.Helper()
	tokens, token := seeded(t, c)
	logs := &testkit.SyncBuffer{}
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(logs, nil)))
	files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
	cfg := &config.Config{PublicURL: "http://localhost", ViewerURL: "http://localhost/share/"}
	return observed{h: newRouter(c, tokens, cfg, files, log), token: token, logs: logs}
}

// send serves one request; id, when set, is sent as X-Request-Id.
func (o observed) send(t *testing.T, method, path, token, id, body string) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if id != "" {
		req.Header.Set(requestid.Header, id)
	}
	rec := httptest.NewRecorder()
	o.h.ServeHTTP(rec, req)
	return rec
}

// TestRequestIDs: every answer echoes the request's id (the client's
// when well-formed), every error body carries it (problem+json instance,
// GraphQL extensions.requestId), and the request's log lines name it.
func TestRequestIDs(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		o := newObserved(t, c)
		hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
		const gqlBad = `{"query":"{ materials(first: 1) { edges { node { nope } } } }"}`
		const gqlMissing = `{"query":"{ material(id: 999999) { id } }"}`
		for _, tc := range []struct {
			name, method, path, token, sent, body string
			status                                int
			kind                                  string // problem, graphql, or none
		}{
			{"REST 401 keeps the client's id", "GET", "/api/open-api/v1/orders", "", "client-req-1", "", 401, "problem"},
			{"REST 404 of a missing order", "GET", "/api/open-api/v1/orders/999999", o.token, "b1e4/x:y@z+=_~.", "", 404, "problem"},
			{"REST 400 makes an id for a malformed one", "GET", "/api/open-api/v1/orders?page=x", o.token, "has space", "", 400, "problem"},
			{"REST 405", "PATCH", "/api/open-api/v1/orders", o.token, "", "", 405, "problem"},
			{"unknown path", "GET", "/nowhere", "", "", "", 404, "problem"},
			{"file not found", "GET", "/files/missing.png", "", "", "", 404, "problem"},
			{"GraphQL refused token", "POST", "/graphql", "not-a-jwt", "gql-1", `{"query":"{ viewer { ownerID } }"}`, 401, "graphql"},
			{"GraphQL validation error", "POST", "/graphql", o.token, "gql-2", gqlBad, 200, "graphql"},
			{"GraphQL body that is not JSON", "POST", "/graphql", o.token, "gql-3", "{not json", 400, "graphql"},
			{"GraphQL resolver error", "POST", "/graphql", o.token, "", gqlMissing, 200, "graphql"},
			{"success", "GET", "/api/open-api/v1/orders?per_page=1", o.token, "ok-1", "", 200, "none"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := o.send(t, tc.method, tc.path, tc.token, tc.sent, tc.body)
				id := rec.Header().Get(requestid.Header)
				switch {
				case requestid.Valid(tc.sent) && id != tc.sent:
					t.Fatalf("X-Request-Id = %q; want the client's %q", id, tc.sent)
				case !requestid.Valid(tc.sent) && !hex32.MatchString(id):
					t.Fatalf("X-Request-Id = %q for a request that sent %q; want a new 32-hex id", id, tc.sent)
				}
				if rec.Code != tc.status {
					t.Errorf("status %d; want %d: %s", rec.Code, tc.status, rec.Body)
				}
				switch tc.kind {
				case "problem":
					var p struct{ Instance string }
					if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Instance != "urn:request:"+id {
						t.Errorf("problem instance %q (%v); want urn:request:%s in %s", p.Instance, err, id, rec.Body)
					}
				case "graphql":
					var g struct {
						Errors []struct{ Extensions map[string]any }
					}
					if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil || len(g.Errors) == 0 {
						t.Fatalf("no GraphQL errors (%v): %s", err, rec.Body)
					}
					for _, e := range g.Errors {
						if e.Extensions["requestId"] != id {
							t.Errorf("extensions.requestId = %v; want %s: %s", e.Extensions["requestId"], id, rec.Body)
						}
					}
				case "none":
					if strings.Contains(rec.Body.String(), id) {
						t.Errorf("a successful answer carries the id in its body: %s", rec.Body)
					}
				}
				if !strings.Contains(o.logs.String(), "msg=request method="+tc.method) || !regexp.MustCompile(
					`(?m)msg=request method=`+tc.method+` path=`+regexp.QuoteMeta(strings.SplitN(tc.path, "?", 2)[0])+` .*request_id="?`+regexp.QuoteMeta(id)+`"?$`).MatchString(o.logs.String()) {
					t.Errorf("no request log line with request_id=%s:\n%s", id, o.logs)
				}
			})
		}
	})
}

// TestMetricsEndpoint: /metrics on the public address (METRICS_ADDR
// unset) counts REST and GraphQL by route template and operation, never
// by raw path, and has the pool, runtime and process collectors.
func TestMetricsEndpoint(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		o := newObserved(t, c)
		for _, id := range []string{"1", "2", "999999"} {
			o.send(t, "GET", "/api/open-api/v1/orders/"+id, o.token, "", "")
		}
		o.send(t, "POST", "/graphql", o.token, "", `{"query":"query Mats { materials(first: 1) { totalCount } }"}`)
		o.send(t, "POST", "/graphql", o.token, "", `{"query":"query Mats { materials(first: 2) { totalCount } }"}`)
		o.send(t, "POST", "/graphql", o.token, "", `{"query":"{ viewer { ownerID } }"}`)
		o.send(t, "POST", "/graphql", o.token, "", `{"query":"query Broken { nope }"}`)
		rec := o.send(t, "GET", "/metrics", "", "", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics = %d", rec.Code)
		}
		text := rec.Body.String()
		for _, want := range []string{
			`http_requests_total{method="GET",route="/api/open-api/v1/orders/{id}",status="200"} 2`,
			`http_requests_total{method="GET",route="/api/open-api/v1/orders/{id}",status="404"} 1`,
			`http_request_duration_seconds_count{method="GET",route="/api/open-api/v1/orders/{id}",status="200"} 2`,
			`graphql_requests_total{operation="Mats",status="200",type="query"} 2`,
			`graphql_requests_total{operation="anonymous",status="200",type="query"} 1`,
			`graphql_requests_total{operation="invalid",status="200",type="unknown"} 1`,
			`go_sql_max_open_connections{db_name="catalogue"}`,
			`go_goroutines `,
			`process_cpu_seconds_total `,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if bytes.Contains(rec.Body.Bytes(), []byte("orders/999999")) || bytes.Contains(rec.Body.Bytes(), []byte(`Broken`)) {
			t.Errorf("/metrics holds a raw path or the name of an invalid operation")
		}
	})
}

// TestMetricsAddr: with METRICS_ADDR, /metrics is served there and no
// longer on the public address.
func TestMetricsAddr(t *testing.T) {
	addr, metricsAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	env := map[string]string{
		"ADDR": addr, "METRICS_ADDR": metricsAddr, "DEMO": "false",
		"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "c.db"), "UPLOAD_DIR": t.TempDir(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &stderr) }()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d\n%s", code, stderr.String())
		}
	}()
	waitReady(t, "http://"+addr)
	if code, _, _ := fetch(t, "http://"+addr+"/metrics", ""); code != http.StatusNotFound {
		t.Errorf("/metrics on the public address = %d; want 404 when METRICS_ADDR is set", code)
	}
	code, ctype, body := fetch(t, "http://"+metricsAddr+"/metrics", "")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") ||
		!bytes.Contains(body, []byte(`http_requests_total{method="GET",route="/readyz",status="200"}`)) {
		t.Errorf("GET METRICS_ADDR/metrics = %d %s:\n%.500s", code, ctype, body)
	}
}
