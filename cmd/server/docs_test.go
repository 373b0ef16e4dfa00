package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/testkit"
)

// testDocs, run by testServe against the running service with its demo
// token, reads the REST reference without a token and tries GET /orders
// from it in headless Chromium.
func testDocs(t *testing.T, base, token string) {
	t.Run("REST docs in chromium", func(t *testing.T) {
		for _, path := range []string{"/api/open-api/v1/docs", "/api/open-api/v1/docs/", "/api/open-api/v1/docs/assets/swagger-ui-bundle.js"} {
			res, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s without a token = %d; want 200", path, res.StatusCode)
			}
		}
		ctx := testkit.Browser(t)
		rec := testkit.Record(ctx)
		ops := testkit.DocsOperations(t, ctx, base+"/api/open-api/v1/docs#token="+token)
		for _, want := range []string{"GET /orders List orders", "POST /orders Create an order", "GET /shared/{key} Open a share link"} {
			if !slices.Contains(ops, want) {
				t.Errorf("the REST reference lacks %q:\n%s", want, strings.Join(ops, "\n"))
			}
		}
		status, body := testkit.TryDocsOperation(t, ctx, "GET", "/orders")
		if status != "200" || !strings.Contains(body, `"total": 30`) {
			t.Errorf("GET /orders from the REST reference: %s\n%s\nwant 200 with the demo's 30 orders", status, body)
		}
		rec.CheckOffline(t)
	})
}
