package playground_test

import (
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/edge"
	"github.com/configurator/catalogue/internal/playground"
)

func get(t *testing.T, h http.Handler, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body)
}

func TestPage(t *testing.T) {
	h := playground.Handler("Catalogue <API>", "/graphql")
	externalURL := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`)
	for target, assets := range map[string]string{
		"/playground":  "./playground/assets/",
		"/playground/": "./assets/",
	} {
		t.Run(target, func(t *testing.T) {
			res, body := get(t, h, target)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", res.StatusCode)
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			for _, want := range []string{
				"<!doctype html>",
				"<title>Catalogue &lt;API&gt;</title>",
				`data-endpoint="/graphql"`,
				`src="` + assets + `graphiql.min.js"`,
				`href="` + assets + `graphiql.min.css"`,
				`src="` + assets + `graphiql-plugin-explorer.umd.js"`,
				`href="` + assets + `graphiql-plugin-explorer.css"`,
				`data-default-query="` + template.HTMLEscapeString(playground.WelcomeQuery) + `"`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("page does not contain %s:\n%s", want, body)
				}
			}
			if u := externalURL.FindString(body); u != "" {
				t.Errorf("page refers to external URL %q", u)
			}
			if strings.Contains(body, "data-demo-token") {
				t.Errorf("page without a demo token carries one:\n%s", body)
			}
		})
	}
}

// TestDemoToken: the page carries the demo token only when it is requested
// under a loopback name, and then is neither shared with other origins
// (edge.CORS in front, as in serve) nor cached.
func TestDemoToken(t *testing.T) {
	h := edge.CORS(playground.Handler("Test", "/graphql", playground.DemoToken("demo.jwt")))
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost:8080", true},
		{"LOCALHOST", true},
		{"127.0.0.1:8080", true},
		{"127.3.4.5", true},
		{"[::1]:8080", true},
		{"example.com", false},
		{"localhost.example.com:8080", false},
		{"192.168.1.10:8080", false},
		{"[::ffff:10.0.0.1]:8080", false},
		{"", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/playground", nil)
			req.Host = tc.host
			req.Header.Set("Origin", "https://evil.example")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if got := strings.Contains(body, `data-demo-token="demo.jwt"`); got != tc.want {
				t.Errorf("page carries the demo token: %v; want %v\n%s", got, tc.want, body)
			}
			acao, cache := rec.Header().Get("Access-Control-Allow-Origin"), rec.Header().Get("Cache-Control")
			if tc.want && (acao != "" || cache != "no-store") {
				t.Errorf("page with the token: Access-Control-Allow-Origin %q, Cache-Control %q; want none and no-store", acao, cache)
			}
			if !tc.want && (acao != "*" || cache != "no-cache") {
				t.Errorf("page without the token: Access-Control-Allow-Origin %q, Cache-Control %q; want * and no-cache as any page", acao, cache)
			}
		})
	}
}

func TestDocsPage(t *testing.T) {
	h := playground.Docs("REST <v1>", "/api/open-api/v1/openapi.json")
	externalURL := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`)
	for target, assets := range map[string]string{
		"/api/open-api/v1/docs":  "./docs/assets/",
		"/api/open-api/v1/docs/": "./assets/",
	} {
		t.Run(target, func(t *testing.T) {
			res, body := get(t, h, target)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", res.StatusCode)
			}
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "connect-src 'self'") || strings.Contains(csp, "unsafe-eval") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
			for _, want := range []string{
				"<title>REST &lt;v1&gt;</title>",
				`data-spec="/api/open-api/v1/openapi.json"`,
				`src="` + assets + `swagger-ui-bundle.js"`,
				`src="` + assets + `docs.js"`,
				`href="` + assets + `swagger-ui.css"`,
			} {
				if !strings.Contains(body, want) {
					t.Errorf("page does not contain %s:\n%s", want, body)
				}
			}
			if strings.Contains(body, "graphiql") {
				t.Errorf("the REST page loads GraphiQL:\n%s", body)
			}
			if u := externalURL.FindString(body); u != "" {
				t.Errorf("page refers to external URL %q", u)
			}
		})
	}
}

func TestAssets(t *testing.T) {
	h := playground.Handler("Test", "/graphql")
	for name, ctype := range map[string]string{
		"graphiql.min.js":                 "text/javascript; charset=utf-8",
		"graphiql.min.css":                "text/css; charset=utf-8",
		"react.production.min.js":         "text/javascript; charset=utf-8",
		"react-dom.production.min.js":     "text/javascript; charset=utf-8",
		"playground.js":                   "text/javascript; charset=utf-8",
		"playground.css":                  "text/css; charset=utf-8",
		"graphiql-plugin-explorer.umd.js": "text/javascript; charset=utf-8",
		"graphiql-plugin-explorer.css":    "text/css; charset=utf-8",
		"swagger-ui-bundle.js":            "text/javascript; charset=utf-8",
		"swagger-ui.css":                  "text/css; charset=utf-8",
		"docs.js":                         "text/javascript; charset=utf-8",
		"docs.css":                        "text/css; charset=utf-8",
	} {
		t.Run(name, func(t *testing.T) {
			res, body := get(t, h, "/playground/assets/"+name)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != ctype {
				t.Errorf("Content-Type = %q, want %q", got, ctype)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if got := res.Header.Get("Cache-Control"); !strings.Contains(got, "max-age=") {
				t.Errorf("Cache-Control = %q", got)
			}
			if len(body) == 0 {
				t.Error("empty body")
			}
		})
	}
}

func TestAssetNotFound(t *testing.T) {
	h := playground.Handler("Test", "/graphql")
	for _, name := range []string{"nope.js", "README.md", "LICENSE.react", "LICENSE.graphiql-explorer", "NOTICE.swagger-ui", "swagger-ui-bundle.js.LICENSE.txt", "../playground.go", "", "sub/x.js"} {
		res, _ := get(t, h, "/playground/assets/"+name)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%q: status = %d, want 404", name, res.StatusCode)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	rec := httptest.NewRecorder()
	playground.Handler("Test", "/graphql").ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/playground", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("status = %d, want 405", rec.Code)
	}
}
