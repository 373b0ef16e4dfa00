package browsertest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/configurator/catalogue/internal/browsertest"
	"github.com/configurator/catalogue/internal/playground"
)

// introspection describes the schema `type Query { hello: String }`, just
// enough for GraphiQL to load the schema and validate queries against it.
const introspection = `{"data":{"__schema":{
	"queryType":{"name":"Query"},"mutationType":null,"subscriptionType":null,
	"types":[
		{"kind":"OBJECT","name":"Query","interfaces":[],"fields":[
			{"name":"hello","args":[],"isDeprecated":false,"deprecationReason":null,
			 "type":{"kind":"SCALAR","name":"String","ofType":null}}]},
		{"kind":"SCALAR","name":"String"}],
	"directives":[]}}}`

// fakeGraphQL stands in for the real service: it insists on a bearer token
// and answers every query with hello: "world".
func fakeGraphQL(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer secret" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"message":"unauthorized"}]}`))
		return
	}
	var req struct{ Query string }
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"errors":[{"message":"bad request"}]}`))
		return
	}
	if strings.Contains(req.Query, "__schema") {
		_, _ = w.Write([]byte(introspection))
		return
	}
	_, _ = w.Write([]byte(`{"data":{"hello":"world"}}`))
}

func TestPlaygroundOffline(t *testing.T) {
	mux := http.NewServeMux()
	h := playground.Handler("Test", "/graphql")
	mux.Handle("/playground", h)
	mux.Handle("/playground/", h)
	mux.HandleFunc("POST /graphql", fakeGraphQL)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := browsertest.NewContext(t)
	// Record every request the page makes and everything it complains
	// about, Content-Security-Policy violations included.
	rec := browsertest.Record(ctx)

	got := browsertest.RunPlaygroundQuery(t, ctx, srv.URL+"/playground#token=secret", "{ hello }")
	if !strings.Contains(got, `"world"`) {
		t.Errorf("result with #token = %s, want it to contain \"world\"", got)
	}

	// The headers are kept in localStorage, so the token still works after
	// opening the page again without it.
	got = browsertest.RunPlaygroundQuery(t, ctx, srv.URL+"/playground/", "query Again { hello }")
	if !strings.Contains(got, `"world"`) {
		t.Errorf("result after reload = %s, want it to contain \"world\"", got)
	}

	// Dialogs make GraphiQL inject a <style> element, which the page's
	// Content-Security-Policy must allow.
	err := chromedp.Run(ctx,
		chromedp.Click(`button[aria-label="Open settings dialog"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[role="dialog"]`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("open settings dialog: %v", err)
	}

	rec.CheckOffline(t)
}
