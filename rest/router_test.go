package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
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

// writeEndpoint is one valid request of a write endpoint: a token that
// may make the write has it accepted. Envelope endpoints answer failures
// in {success, message, data}.
type writeEndpoint struct {
	method, path string
	contentType  string
	body         []byte
	// dashboard marks the [Dashboard API] writes, which an Open API token
	// may not make (403).
	dashboard bool
	envelope  bool
}

// writeEndpoints has a valid request of every write endpoint, in an order
// in which all of them succeed one after the other.
func writeEndpoints(t *testing.T) []writeEndpoint {
	form := func(method, path string, dashboard, envelope bool, parts ...formPart) writeEndpoint {
		body, ct := encodeForm(t, parts)
		return writeEndpoint{method: method, path: path, contentType: ct, body: body, dashboard: dashboard, envelope: envelope}
	}
	json := func(method, path, body string) writeEndpoint {
		return writeEndpoint{method: method, path: path, contentType: "application/json", body: []byte(body), dashboard: true}
	}
	return []writeEndpoint{
		form(http.MethodPost, "/orders", false, false, orderForm(filePart("configurator_snapshot", testkit.PNG(8, 8, 1)))...),
		json(http.MethodPost, "/materials", `{"name":"x"}`),
		json(http.MethodPut, "/materials/1", `{"name":"x"}`),
		{method: http.MethodDelete, path: "/materials/1", dashboard: true},
		form(http.MethodPost, "/textures", true, false, textPart("name", "x"), filePart("file", testkit.PNG(8, 8, 2))),
		json(http.MethodPut, "/textures/1", `{"name":"x"}`),
		form(http.MethodPut, "/textures/1", true, false, filePart("file", testkit.PNG(8, 8, 3))),
		{method: http.MethodDelete, path: "/textures/1", dashboard: true},
		form(http.MethodPost, "/configurator-options/set/new-options", false, true, textPart("options", `{"1":{"id":3}}`)),
	}
}

// request builds the endpoint's request with an Authorization header
// ("" for none).
func (e writeEndpoint) request(t *testing.T, f *fixture, authorization string) *http.Request {
	t.Helper()
	req := f.request(t, e.method, e.path, "", bytes.NewReader(e.body))
	if e.contentType != "" {
		req.Header.Set("Content-Type", e.contentType)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
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
		// checkRefused checks a 401 and its challenge.
		checkRefused := func(t *testing.T, what, header string, envelope bool, status int, h http.Header, body []byte) {
			t.Helper()
			want := "Bearer"
			if header != "" {
				want = `Bearer error="invalid_token"`
			}
			if got := h.Get("WWW-Authenticate"); got != want {
				t.Errorf("%s: WWW-Authenticate = %q; want %q", what, got, want)
			}
			if envelope {
				checkEnvelopeFailure(t, status, h, body, http.StatusUnauthorized)
				return
			}
			p := problemOf(t, what, status, h, body, http.StatusUnauthorized)
			if p.Code != "UNAUTHENTICATED" {
				t.Errorf("%s: code = %s; want UNAUTHENTICATED", what, p.Code)
			}
		}
		for _, e := range readEndpoints {
			for _, tc := range refused {
				t.Run(tc.name+" "+e.path, func(t *testing.T) {
					req := f.request(t, http.MethodGet, e.path, "", nil)
					if tc.header != "" {
						req.Header.Set("Authorization", tc.header)
					}
					status, h, body := f.do(t, req)
					checkRefused(t, "GET "+e.path, tc.header, e.envelope, status, h, body)
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

		// Writes are refused the same way, and change nothing; an Open API
		// token may not make the dashboard's writes.
		rows := func() [3]int {
			return [3]int{rowCount(t, c, "orders"), rowCount(t, c, "materials"), rowCount(t, c, "textures")}
		}
		before := rows()
		endpoints := writeEndpoints(t)
		for _, e := range endpoints {
			what := e.method + " " + e.path
			for _, tc := range refused {
				t.Run(tc.name+" "+what, func(t *testing.T) {
					status, h, body := f.do(t, e.request(t, f, tc.header))
					checkRefused(t, what, tc.header, e.envelope, status, h, body)
				})
			}
			if e.dashboard {
				t.Run("open api "+what, func(t *testing.T) {
					status, h, body := f.do(t, e.request(t, f, "Bearer "+f.owner1))
					p := problemOf(t, what, status, h, body, http.StatusForbidden)
					if p.Code != "FORBIDDEN" {
						t.Errorf("%s with an Open API token: code = %s; want FORBIDDEN", what, p.Code)
					}
				})
			}
		}
		if after := rows(); after != before || f.store.Len() != 0 {
			t.Errorf("after the refused writes: orders, materials, textures = %v, %d files stored; want %v, 0", after, f.store.Len(), before)
		}
		// The same requests with a token that may make them succeed, so
		// the refusals above were for the token alone.
		for _, e := range endpoints {
			token := f.owner1
			if e.dashboard {
				token = f.dash1
			}
			if status, _, body := f.do(t, e.request(t, f, "Bearer "+token)); status/100 != 2 {
				t.Errorf("%s %s with a token that may = %d; want 2xx: %s", e.method, e.path, status, body)
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
			{http.MethodPost, "/orders/1", "GET, PATCH"},
			{http.MethodDelete, "/orders/1", "GET, PATCH"},
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
