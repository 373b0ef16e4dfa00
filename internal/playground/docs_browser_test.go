package playground_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/internal/playground"
	"github.com/configurator/catalogue/internal/testkit"
)

// documentOperations lists the operations of rest/openapi.json as
// DocsOperations renders them: "METHOD /path summary".
func documentOperations(t *testing.T, doc []byte) []string {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for path, item := range d.Paths {
		for method, raw := range item {
			switch method {
			case "get", "post", "put", "patch", "delete":
				var op struct{ Summary string }
				json.Unmarshal(raw, &op)
				ops = append(ops, strings.ToUpper(method)+" "+path+" "+op.Summary)
			}
		}
	}
	slices.Sort(ops)
	return ops
}

// TestDocsOffline opens the REST reference on the service's real OpenAPI
// document, in a browser that may reach nothing but the test server: every
// operation of the document is on the page, and one is tried with the
// token of the #token= fragment.
func TestDocsOffline(t *testing.T) {
	doc, err := os.ReadFile("../../rest/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		auth []string
	)
	mux := http.NewServeMux()
	h := playground.Docs("Test REST", "/api/open-api/v1/openapi.json")
	mux.Handle("/api/open-api/v1/docs", h)
	mux.Handle("/api/open-api/v1/docs/", h)
	mux.HandleFunc("GET /api/open-api/v1/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	mux.HandleFunc("GET /api/open-api/v1/orders", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data":[{"id":4711}],"pagination":{"total":1}}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := testkit.Browser(t)
	rec := testkit.Record(ctx)

	got := testkit.DocsOperations(t, ctx, srv.URL+"/api/open-api/v1/docs#token=secret")
	want := documentOperations(t, doc)
	if !slices.Contains(got, "GET /orders List orders") {
		t.Errorf("the page does not show GET /orders List orders:\n%s", strings.Join(got, "\n"))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the page shows\n  %s\nthe document has\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	status, body := testkit.TryDocsOperation(t, ctx, "GET", "/orders")
	if status != "200" || !strings.Contains(body, "4711") {
		t.Errorf("GET /orders from the page: %s %s; want 200 with order 4711", status, body)
	}

	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(auth, []string{"Bearer secret"}) {
		t.Errorf("GET /orders was sent with Authorization %q; want once with the #token= fragment's", auth)
	}
	rec.CheckOffline(t)
}
