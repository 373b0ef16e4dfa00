package playground_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/configurator/catalogue/internal/playground"
	"github.com/configurator/catalogue/internal/testkit"
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

// playgroundServer serves the playground made with opts at /playground and
// the fake service at /graphql.
func playgroundServer(t *testing.T, opts ...playground.Option) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	h := playground.Handler("Test", "/graphql", opts...)
	mux.Handle("/playground", h)
	mux.Handle("/playground/", h)
	mux.HandleFunc("POST /graphql", fakeGraphQL)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestPlaygroundOffline(t *testing.T) {
	srv := playgroundServer(t)
	ctx := testkit.Browser(t)
	// Record every request the page makes and everything it complains
	// about, Content-Security-Policy violations included.
	rec := testkit.Record(ctx)

	got := testkit.RunPlaygroundQuery(t, ctx, srv.URL+"/playground#token=secret", "{ hello }")
	if !strings.Contains(got, `"world"`) {
		t.Errorf("result with #token = %s, want it to contain \"world\"", got)
	}

	// The headers are kept in localStorage, so the token still works after
	// opening the page again without it.
	got = testkit.RunPlaygroundQuery(t, ctx, srv.URL+"/playground/", "query Again { hello }")
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

// TestPlaygroundDemoToken opens a playground whose server minted a demo
// token, without #token=: the headers editor holds it, so the first run
// works, the tab opens on the welcome query, and the explorer plugin
// draws the schema; all offline, within the page's CSP.
func TestPlaygroundDemoToken(t *testing.T) {
	srv := playgroundServer(t, playground.DemoToken("secret"))
	ctx := testkit.Browser(t)
	rec := testkit.Record(ctx)

	p := testkit.OpenPlayground(t, ctx, srv.URL+"/playground")
	if p.Query != playground.WelcomeQuery {
		t.Errorf("the playground opens on the query\n%s\nwant the welcome query\n%s", p.Query, playground.WelcomeQuery)
	}
	var headers map[string]string
	if err := json.Unmarshal([]byte(p.Headers), &headers); err != nil || headers["Authorization"] != "Bearer secret" {
		t.Errorf("headers editor holds %q (%v); want {\"Authorization\": \"Bearer secret\"}", p.Headers, err)
	}
	// The fake answers only with the token: the header is really sent.
	if got := testkit.RunPlaygroundQuery(t, ctx, srv.URL+"/playground", "{ hello }"); !strings.Contains(got, `"world"`) {
		t.Errorf("result with the demo token = %s, want it to contain \"world\"", got)
	}
	if fields := testkit.OpenExplorer(t, ctx); !slices.Contains(fields, "hello") {
		t.Errorf("the explorer lists %q; want the schema's field hello", fields)
	}
	rec.CheckOffline(t)
}

// TestPlaygroundKeepsOtherToken: a token the user chose (here by #token=)
// outlives the demo token on the next visits, while an earlier demo token
// gives way to the current one. The two pages share the origin's storage
// as two runs of the server on one address would.
func TestPlaygroundKeepsOtherToken(t *testing.T) {
	mux := http.NewServeMux()
	first := playground.Handler("Test", "/graphql", playground.DemoToken("first-demo"))
	second := playground.Handler("Test", "/graphql", playground.DemoToken("second-demo"))
	mux.Handle("/first", first)
	mux.Handle("/first/", first)
	mux.Handle("/second", second)
	mux.Handle("/second/", second)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := testkit.Browser(t)

	for _, step := range []struct{ path, want string }{
		{"/first", "Bearer first-demo"},
		{"/second", "Bearer second-demo"}, // say the database was recreated
		{"/first#token=mine", "Bearer mine"},
		{"/second", "Bearer mine"},
	} {
		p := testkit.OpenPlayground(t, ctx, srv.URL+step.path)
		var h map[string]string
		if err := json.Unmarshal([]byte(p.Headers), &h); err != nil {
			t.Fatalf("%s: headers editor holds %q: %v", step.path, p.Headers, err)
		}
		if h["Authorization"] != step.want {
			t.Errorf("%s: Authorization %q, want %q", step.path, h["Authorization"], step.want)
		}
	}
}
