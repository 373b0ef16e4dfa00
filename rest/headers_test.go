package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/valid"
)

// TestMediaHeaderBounds: an Accept over its bound (valid.MediaHeaders) is
// a 400 BAD_REQUEST, a Content-Type over its bound a 415
// UNSUPPORTED_MEDIA_TYPE, naming the header on both transports, before
// anything parses it; one at its bound is served.
func TestMediaHeaderBounds(t *testing.T) {
	ranges := func(n int) string { return strings.Repeat("application/json;q=0.5,", n-1) + "application/json" }
	long := "application/json;q=0.5, " + strings.Repeat("x", valid.MaxAcceptBytes)
	params := func(n int) string { return "application/json" + strings.Repeat("; a=b", n) }
	boundary := "multipart/form-data; boundary=" + strings.Repeat("b", valid.MaxContentTypeBytes)
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			header, value string
			refused       bool
		}{
			{"Accept", ranges(valid.MaxAcceptRanges), false},
			{"Accept", ranges(valid.MaxAcceptRanges + 1), true},
			{"Accept", long, true},
			{"Content-Type", params(valid.MaxContentTypeParams), false},
			{"Content-Type", params(valid.MaxContentTypeParams + 1), true},
			{"Content-Type", boundary, true},
		} {
			name := fmt.Sprintf("%s of %d bytes", tc.header, len(tc.value))
			t.Run(name, func(t *testing.T) {
				checkREST(t, f, tc.header, tc.value, tc.refused)
				checkGraphQL(t, f, tc.header, tc.value, tc.refused)
			})
		}
	})
}

func checkREST(t *testing.T, f *fixture, header, value string, refused bool) {
	t.Helper()
	req := f.request(t, http.MethodGet, "/orders", f.owner1, nil)
	if header == "Content-Type" {
		// A body's media type is read by a write.
		req = f.request(t, http.MethodPatch, "/orders/1", f.dash1, strings.NewReader(`{"status":"new"}`))
	}
	req.Header.Set(header, value)
	status, h, body := f.do(t, req)
	if !refused {
		if status >= 400 && strings.Contains(string(body), header) {
			t.Errorf("REST: %d %.300s; want %s at its bound served", status, body, header)
		}
		return
	}
	wantStatus, wantCode := headerRefusal(header)
	p := problemOf(t, "REST "+header, status, h, body, wantStatus)
	if string(p.Code) != wantCode || len(p.Errors) != 1 || p.Errors[0].Name != header || !strings.Contains(p.Detail, header) {
		t.Errorf("REST: %+v; want %s naming %s", p, wantCode, header)
	}
}

func checkGraphQL(t *testing.T, f *fixture, header, value string, refused bool) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": "{ ordersPage { data { id } } }"})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.owner1)
	req.Header.Set(header, value)
	rec := httptest.NewRecorder()
	f.gql.ServeHTTP(rec, req)
	var resp struct {
		Errors []struct {
			Message    string
			Extensions struct{ Code, Field string }
		}
	}
	json.Unmarshal(rec.Body.Bytes(), &resp)
	if !refused {
		if len(resp.Errors) > 0 && strings.Contains(resp.Errors[0].Message, header) {
			t.Errorf("GraphQL: %d %.300s; want %s at its bound served", rec.Code, rec.Body, header)
		}
		return
	}
	wantStatus, wantCode := headerRefusal(header)
	if rec.Code != wantStatus || len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != wantCode ||
		!strings.Contains(resp.Errors[0].Message, header) {
		t.Errorf("GraphQL: %d %.300s; want %d %s naming %s", rec.Code, rec.Body, wantStatus, wantCode, header)
	}
}

// headerRefusal is the answer to a header over its bound.
func headerRefusal(header string) (int, string) {
	if header == "Content-Type" {
		return http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"
	}
	return http.StatusBadRequest, "BAD_REQUEST"
}
