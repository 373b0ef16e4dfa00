package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestPartHeaderBounds: a multipart body's part headers are bounded as
// they stream in (valid.BoundParts), on both transports: one part's
// headers over valid.MaxPartHeaderBytes are a 400 BAD_REQUEST naming the
// part, more than valid.MaxParts parts or valid.MaxPartHeadersTotal of
// headers together a 413; headers at the bound are read as before.
func TestPartHeaderBounds(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		sizes := func(n, size int) []int { return slices.Repeat([]int{size}, n) }
		for _, tc := range []struct {
			name   string
			prefix string
			sizes  []int
			status int
			detail string
		}{
			{"headers at the bound", "", []int{valid.MaxPartHeaderBytes}, 0, ""},
			{"headers over the bound", "", []int{150, valid.MaxPartHeaderBytes + 1}, 400, "are longer than 8192 bytes"},
			{"too many parts", "", sizes(valid.MaxParts+1, 150), 413, "more than 1000 parts"},
			{"too many parts after a final-looking preamble line", "--B--x\r\n", sizes(valid.MaxParts+1, 150), 413, "more than 1000 parts"},
			{"headers too long together", "", sizes(valid.MaxPartHeadersTotal/8000+1, 8000), 413, "longer than 262144 bytes together"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := f.request(t, http.MethodPost, "/textures", f.dash1, strings.NewReader(tc.prefix+multipartBody("", tc.sizes)))
				req.Header.Set("Content-Type", "multipart/form-data; boundary=B")
				status, h, body := f.do(t, req)
				if tc.status == 0 {
					if strings.Contains(string(body), "multipart part") || status == 413 {
						t.Errorf("REST: %d %.300s; want headers at the bound read", status, body)
					}
				} else if p := problemOf(t, "REST", status, h, body, tc.status); !strings.Contains(p.Detail, tc.detail) {
					t.Errorf("REST: %+v; want %d saying %q", p, tc.status, tc.detail)
				}

				ops := `{"query":"mutation($f: Upload!) { createTexture(input: {name: \"t\", file: $f}) { id } }","variables":{"f":null}}`
				greq := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(tc.prefix+multipartBody(ops, tc.sizes)))
				greq.Header.Set("Content-Type", "multipart/form-data; boundary=B")
				greq.Header.Set("Authorization", "Bearer "+f.dash1)
				rec := httptest.NewRecorder()
				f.gql.ServeHTTP(rec, greq)
				var resp struct {
					Errors []struct {
						Message    string
						Extensions struct{ Code string }
					}
				}
				json.Unmarshal(rec.Body.Bytes(), &resp)
				if tc.status == 0 {
					if strings.Contains(rec.Body.String(), "multipart part") || rec.Code == 413 {
						t.Errorf("GraphQL: %d %.300s; want headers at the bound read", rec.Code, rec.Body)
					}
					return
				}
				code := map[int]string{400: "BAD_REQUEST", 413: "PAYLOAD_TOO_LARGE"}[tc.status]
				if rec.Code != tc.status || len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != code ||
					!strings.Contains(resp.Errors[0].Message, tc.detail) {
					t.Errorf("GraphQL: %d %.300s; want %d %s saying %q", rec.Code, rec.Body, tc.status, code, tc.detail)
				}
			})
		}
	})
}

// multipartBody is a form (boundary B) of file parts f0, f1, ... whose
// headers (from the end of the boundary line to the blank line) are of
// sizes bytes; with ops, a GraphQL multipart request: the operations
// part, then the map giving every file to variables.f, then the files.
func multipartBody(ops string, sizes []int) string {
	var b strings.Builder
	if ops != "" {
		paths := make([]string, len(sizes))
		for i := range sizes {
			paths[i] = fmt.Sprintf(`"f%d":["variables.f"]`, i)
		}
		b.WriteString("--B\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n" + ops + "\r\n")
		b.WriteString("--B\r\nContent-Disposition: form-data; name=\"map\"\r\n\r\n{" + strings.Join(paths, ",") + "}\r\n")
	}
	for i, n := range sizes {
		h := fmt.Sprintf("\r\nContent-Disposition: form-data; name=\"f%d\"; filename=\"a.png\"\r\nContent-Type: image/png\r\nX-Pad: ", i)
		b.WriteString("--B" + h + strings.Repeat("x", n-len(h)-4) + "\r\n\r\nPNG\r\n")
	}
	b.WriteString("--B--\r\n")
	return b.String()
}
