package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// readEndpoint is one valid request of a read endpoint. Envelope
// endpoints answer failures in {success, message, data}.
type readEndpoint struct {
	path     string
	envelope bool
}

// readEndpoints has a request of every read endpoint.
var readEndpoints = []readEndpoint{
	{path: "/orders"},
	{path: "/orders/1"},
	{path: "/materials"},
	{path: "/materials/1"},
	{path: "/materials-categories/list"},
	{path: "/textures"},
	{path: "/textures/1"},
	{path: "/configurator-forms"},
	{path: "/configurator-forms/1"},
	{path: "/configurator-form-fields"},
	{path: "/configurator-form-fields/1"},
	{path: "/configurator-options/types/list"},
	{path: "/configurator-options"},
	{path: "/configurator-option/1"},
	{path: "/configurator-option-variations?configurator_option_id=1"},
	{path: "/configurator-option-sets", envelope: true},
}

func TestAuth(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		refused := []struct{ name, header string }{
			{"no header", ""},
			{"garbage token", "Bearer garbage"},
			{"empty bearer", "Bearer "},
			{"basic scheme", "Basic dXNlcjpwYXNz"},
			{"token without scheme", f.owner1},
			{"revoked token", "Bearer " + f.revoked},
			{"token of another key", "Bearer " + f.foreign},
			{"tampered token", "Bearer " + f.owner1[:len(f.owner1)-2] + "xx"},
		}
		for _, e := range readEndpoints {
			for _, tc := range refused {
				t.Run(tc.name+" "+e.path, func(t *testing.T) {
					req := f.request(t, http.MethodGet, e.path, "", nil)
					if tc.header != "" {
						req.Header.Set("Authorization", tc.header)
					}
					status, h, body := f.do(t, req)
					want := "Bearer"
					if tc.header != "" {
						want = `Bearer error="invalid_token"`
					}
					if got := h.Get("WWW-Authenticate"); got != want {
						t.Errorf("WWW-Authenticate = %q; want %q", got, want)
					}
					if e.envelope {
						checkEnvelopeFailure(t, status, h, body, http.StatusUnauthorized)
						return
					}
					p := problemOf(t, "GET "+e.path, status, h, body, http.StatusUnauthorized)
					if p.Code != "UNAUTHENTICATED" {
						t.Errorf("code = %s; want UNAUTHENTICATED", p.Code)
					}
				})
			}
			// Open API and dashboard tokens both read.
			for name, token := range map[string]string{"open api": f.owner1, "dashboard": f.dash1} {
				t.Run(name+" "+e.path, func(t *testing.T) {
					if status, _, body := f.get(t, token, e.path); status != http.StatusOK {
						t.Errorf("GET %s = %d; want 200: %s", e.path, status, body)
					}
				})
			}
		}
	})
}

// checkEnvelopeFailure checks a failure in the {success, message, data}
// envelope.
func checkEnvelopeFailure(t *testing.T, status int, h http.Header, body []byte, want int) {
	t.Helper()
	if status != want || h.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s; want %d, application/json: %s", status, h.Get("Content-Type"), want, body)
	}
	var env struct {
		Success *bool
		Message string
		Data    json.RawMessage
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Success == nil || *env.Success || env.Message == "" || string(env.Data) != "null" {
		t.Errorf("body = %s; want {success: false, message, data: null}", body)
	}
}

func TestRouting(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, path := range []string{
			"", "/", "/nope", "/orders/1/items", "/orders/", "/order", "/configurator-options/1",
			"/configurator-option", "/materials-categories", "/materials-categories/list/1", "/ORDERS",
		} {
			for _, token := range []string{f.owner1, ""} {
				status, h, body := f.get(t, token, path)
				p := problemOf(t, "GET "+path, status, h, body, http.StatusNotFound)
				if p.Code != "NOT_FOUND" {
					t.Errorf("GET %s: code %s; want NOT_FOUND", path, p.Code)
				}
			}
		}
		for _, tc := range []struct{ method, path, allow string }{
			{http.MethodPost, "/orders/1", "GET"},
			{http.MethodDelete, "/orders/1", "GET"},
			{http.MethodPut, "/materials-categories/list", "GET"},
			{http.MethodPatch, "/materials/1", "GET, PUT, DELETE"},
			{http.MethodPost, "/textures/1", "GET, PUT, DELETE"},
			{http.MethodPut, "/orders", "GET, POST"},
			{http.MethodPost, "/configurator-option-sets", "GET"},
			{http.MethodDelete, "/configurator-options/types/list", "GET"},
			{http.MethodHead, "/textures", "GET, POST"},
		} {
			t.Run(tc.method+" "+tc.path, func(t *testing.T) {
				status, h, body := f.do(t, f.request(t, tc.method, tc.path, f.owner1, nil))
				if tc.method == http.MethodHead {
					if status != http.StatusMethodNotAllowed || h.Get("Allow") != tc.allow {
						t.Errorf("HEAD %s = %d, Allow %q; want 405, %q", tc.path, status, h.Get("Allow"), tc.allow)
					}
					return
				}
				p := problemOf(t, tc.method+" "+tc.path, status, h, body, http.StatusMethodNotAllowed)
				if h.Get("Allow") != tc.allow || !strings.Contains(p.Detail, tc.method) {
					t.Errorf("%s %s: Allow %q, detail %q; want Allow %q and the method named", tc.method, tc.path, h.Get("Allow"), p.Detail, tc.allow)
				}
			})
		}
	})
}

func TestProblemGolden(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			name, token, method, path string
			status                    int
		}{
			{"problem_401", "", http.MethodGet, "/orders", 401},
			{"problem_401_revoked", f.revoked, http.MethodGet, "/orders", 401},
			{"problem_400_per_page", f.owner1, http.MethodGet, "/orders?per_page=500", 400},
			{"problem_400_many", f.owner1, http.MethodGet, "/materials?page=x&order=up&order_by=price&category_id=0", 400},
			{"problem_400_dates", f.owner1, http.MethodGet, "/orders?start_date=2026-03-05&end_date=2026-03-01", 400},
			{"problem_400_status", f.owner1, http.MethodGet, "/orders?status=paid", 400},
			{"problem_404_order", f.owner1, http.MethodGet, "/orders/999", 404},
			{"problem_404_path", f.owner1, http.MethodGet, "/nope", 404},
			{"problem_405", f.owner1, http.MethodDelete, "/orders/1", 405},
			{"option_sets_401", "", http.MethodGet, "/configurator-option-sets", 401},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, _, body := f.do(t, f.request(t, tc.method, tc.path, tc.token, nil))
				if status != tc.status {
					t.Fatalf("%s %s = %d; want %d: %s", tc.method, tc.path, status, tc.status, body)
				}
				golden(t, tc.name, body)
			})
		}
	})
}
