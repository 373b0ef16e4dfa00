package rest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/schema"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/valid"
)

// The document is OpenAPI 3.1 and is served as such. kin-openapi v0.135
// models OpenAPI 3.0 with a few 3.1 features:
//
//   - it reads a type array (type: [string, "null"]) and its runtime
//     validation (VisitJSON, ValidateResponse) accepts null for it, so the
//     served document is used as is to route and to validate responses;
//   - but its document validator (T.Validate) refuses "null" as a type
//     ("unsupported 'type' value") and refuses the 3.1 keywords it does
//     not model (contentMediaType, contentSchema, the license's
//     identifier: "extra sibling fields").
//
// openAPI30 therefore rewrites a copy into the equivalent 3.0 form for
// T.Validate only: type [X, "null"] becomes type X with nullable: true,
// type "null" becomes nullable: true with enum [null], and
// contentMediaType and contentSchema (annotations of JSON-in-a-string form
// fields) and info.license.identifier (an SPDX expression; 3.0's license
// has a name and a url only) are dropped. Nothing else is changed, so any
// other keyword kin does not know still fails validation.

// openAPIDoc loads the served document and gives it format checks for the
// URL formats, which kin-openapi does not check by itself.
func openAPIDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	// uri: an absolute URI; http(s) ones with a host. Pagination links,
	// Location and share URLs are built from PublicURL, so they are
	// absolute.
	doc.SetStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.Parse(s)
		if err != nil || !u.IsAbs() || ((u.Scheme == "http" || u.Scheme == "https") && u.Host == "") {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
		return nil
	}))
	// uri-reference: what the file fields hold, an absolute http(s) URL
	// or a path on this service.
	doc.SetStringFormatValidator("uri-reference", openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.Parse(s)
		switch {
		case err != nil:
		case u.Scheme == "http" || u.Scheme == "https":
			if u.Host != "" {
				return nil
			}
		case u.Scheme == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
			return nil
		}
		return fmt.Errorf("%q is neither an absolute http(s) URL nor a path starting with /", s)
	}))
	return doc
}

// openAPI30 returns the document rewritten into OpenAPI 3.0 for
// kin-openapi's validator (see above).
func openAPI30(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			switch ty := v["type"].(type) {
			case []any:
				var rest []any
				for _, x := range ty {
					if x == "null" {
						v["nullable"] = true
					} else {
						rest = append(rest, x)
					}
				}
				if len(rest) == 1 {
					v["type"] = rest[0]
				} else {
					v["type"] = rest
				}
			case string:
				if ty == "null" {
					delete(v, "type")
					v["nullable"] = true
					v["enum"] = []any{nil}
				}
			}
			delete(v, "contentMediaType")
			delete(v, "contentSchema")
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	m := v.(map[string]any)
	m["openapi"] = "3.0.3"
	if info, ok := m["info"].(map[string]any); ok {
		if license, ok := info["license"].(map[string]any); ok {
			delete(license, "identifier")
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// operations returns the documented operations by "METHOD /path".
func operations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for p, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+p] = op
		}
	}
	return ops
}

func TestOpenAPIDocument(t *testing.T) {
	ctx := context.Background()
	doc := openAPIDoc(t)

	doc30, err := openapi3.NewLoader().LoadFromData(openAPI30(t, openAPIDocument))
	if err != nil {
		t.Fatalf("load the 3.0 form of openapi.json: %v", err)
	}
	if err := doc30.Validate(ctx, openapi3.EnableSchemaFormatValidation()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}

	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %q, info.version %q; want 3.1.0 and 1.0.0 (the spec's version)", doc.OpenAPI, doc.Info.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != Prefix {
		t.Errorf("servers = %v; want the one server %s", doc.Servers, Prefix)
	}
	if s := doc.Components.SecuritySchemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" || s.Value.BearerFormat != "JWT" {
		t.Errorf("components.securitySchemes.bearerAuth must be http bearer JWT")
	}
	if len(doc.Security) != 1 || doc.Security[0]["bearerAuth"] == nil {
		t.Errorf("security = %v; want bearerAuth for every operation by default", doc.Security)
	}

	public := map[string]bool{"GET /shared/{key}": true, "GET /openapi.json": true}
	dashboard := map[string]bool{
		"PATCH /orders/{id}": true,
		"POST /materials":    true, "PUT /materials/{id}": true, "DELETE /materials/{id}": true,
		"POST /textures": true, "PUT /textures/{id}": true, "DELETE /textures/{id}": true,
	}
	ids := map[string]string{}
	for key, op := range operations(doc) {
		if prev, dup := ids[op.OperationID]; op.OperationID == "" || dup {
			t.Errorf("%s: operationId %q is missing or also used by %s", key, op.OperationID, prev)
		}
		ids[op.OperationID] = key
		if public[key] {
			if op.Security == nil || len(*op.Security) != 0 {
				t.Errorf("%s needs no token: want security: []", key)
			}
		} else {
			if op.Security != nil {
				t.Errorf("%s: want the global bearerAuth security", key)
			}
			if op.Responses.Status(http.StatusUnauthorized) == nil || op.Responses.Status(http.StatusInternalServerError) == nil {
				t.Errorf("%s: a token operation documents 401 and 500", key)
			}
		}
		if got := strings.Contains(op.Description, "[Dashboard API]"); got != dashboard[key] {
			t.Errorf("%s: [Dashboard API] in the description is %v; want %v", key, got, dashboard[key])
		}
		for status, r := range op.Responses.Map() {
			for mt := range r.Value.Content {
				if mt != "application/json" && mt != "application/problem+json" {
					t.Errorf("%s %s: media type %s; v1 answers application/json or application/problem+json", key, status, mt)
				}
			}
		}
	}

	// The enums and limits the code has are the document's.
	param := func(key, name string) *openapi3.Schema {
		op := operations(doc)[key]
		if op == nil {
			t.Fatalf("%s is not documented", key)
		}
		if p := op.Parameters.GetByInAndName("query", name); p != nil {
			return p.Schema.Value
		}
		t.Fatalf("%s has no query parameter %s", key, name)
		return nil
	}
	enum := func(s *openapi3.Schema) []string {
		var out []string
		for _, v := range s.Enum {
			out = append(out, fmt.Sprint(v))
		}
		slices.Sort(out)
		return out
	}
	// order_by lists the sortable fields of the GraphQL twin's orderBy
	// enum, in lower case.
	gql := generated.NewExecutableSchema(generated.Config{}).Schema()
	sorted := 0
	for key, op := range operations(doc) {
		p := op.Parameters.GetByInAndName("query", "order_by")
		if p == nil {
			continue
		}
		sorted++
		twin, _ := op.Extensions["x-graphql"].(string)
		f := gql.Query.Fields.ForName(twin)
		if f == nil || f.Arguments.ForName("orderBy") == nil {
			t.Errorf("%s: x-graphql %q is not a query field with orderBy", key, twin)
			continue
		}
		var names []string
		for _, v := range gql.Types[f.Arguments.ForName("orderBy").Type.Name()].EnumValues {
			names = append(names, strings.ToLower(v.Name))
		}
		slices.Sort(names)
		if got := enum(p.Schema.Value); !slices.Equal(got, names) {
			t.Errorf("%s order_by enum = %v; GraphQL %s.orderBy has %v", key, got, twin, names)
		}
		if got := enum(param(key, "order")); !slices.Equal(got, []string{"asc", "desc"}) {
			t.Errorf("%s order enum = %v; want asc, desc", key, got)
		}
	}
	if sorted != 6 {
		t.Errorf("%d lists take order_by; want 6", sorted)
	}
	if p := param("GET /orders", "page"); *p.Min != 1 || p.Default != float64(1) {
		t.Errorf("page must be 1 or more, default 1 (valid.Page)")
	}
	pp := param("GET /materials", "per_page")
	if len(pp.AnyOf) != 2 || *pp.AnyOf[0].Value.Min != 1 || *pp.AnyOf[0].Value.Max != valid.MaxPerPage ||
		fmt.Sprint(pp.AnyOf[1].Value.Enum) != fmt.Sprint([]any{float64(valid.AllPages)}) || pp.Default != float64(valid.DefaultPerPage) {
		t.Errorf("per_page must be 1..%d or %d, default %d", valid.MaxPerPage, valid.AllPages, valid.DefaultPerPage)
	}
	if got := enum(doc.Components.Schemas["OptionTypes"].Value.Properties["optionTypes"].Value.Items.Value); !slices.Equal(got, slices.Sorted(slices.Values(schema.OptionTypes))) {
		t.Errorf("option types = %v; the schema has %v", got, schema.OptionTypes)
	}
	printMap := operations(doc)["POST /orders"].RequestBody.Value.Content["multipart/form-data"].Schema.Value.Properties["configurator_print_map"].Value
	if printMap.MaxItems == nil || *printMap.MaxItems != valid.MaxPrintMaps {
		t.Errorf("configurator_print_map maxItems must be %d", valid.MaxPrintMaps)
	}
}

// TestOpenAPIRoutes checks the document against the router, both ways.
func TestOpenAPIRoutes(t *testing.T) {
	doc := openAPIDoc(t)
	routed := map[string]bool{}
	err := chi.Walk(New(graph.NewResolver(nil), nil, Options{}).(chi.Routes),
		func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			routed[method+" "+route] = true
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for key := range operations(doc) {
		documented[key] = true
	}
	var missing, extra []string
	for key := range routed {
		if !documented[key] {
			missing = append(missing, key)
		}
	}
	for key := range documented {
		if !routed[key] {
			extra = append(extra, key)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("routed but not in openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("in openapi.json but not routed:\n  %s", strings.Join(extra, "\n  "))
	}
	t.Logf("%d routes, %d documented operations", len(routed), len(documented))
}

// TestOpenAPIServed checks that the document is served as it is in the
// tree, without a token.
func TestOpenAPIServed(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		onDisk, err := os.ReadFile("openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, token := range []string{"", "garbage"} {
			status, h, body := f.get(t, token, "/openapi.json")
			if status != http.StatusOK || h.Get("Content-Type") != "application/json" {
				t.Fatalf("GET /openapi.json (token %q) = %d %s; want 200 application/json", token, status, h.Get("Content-Type"))
			}
			if !bytes.Equal(body, onDisk) || !bytes.Equal(body, openAPIDocument) {
				t.Errorf("GET /openapi.json serves other bytes than rest/openapi.json")
			}
			if h.Get("Cache-Control") != "public, max-age=300" || h.Get("ETag") == "" {
				t.Errorf("Cache-Control %q, ETag %q", h.Get("Cache-Control"), h.Get("ETag"))
			}
		}
		req := f.request(t, http.MethodGet, "/openapi.json", "", nil)
		req.Header.Set("If-None-Match", openAPIETag)
		if status, _, body := f.do(t, req); status != http.StatusNotModified || len(body) != 0 {
			t.Errorf("If-None-Match with the ETag = %d with %d bytes; want 304 without a body", status, len(body))
		}
	})
}

// apiCheck sends requests to a v1 server and validates every response,
// and the requests of successful writes, against the document.
type apiCheck struct {
	doc    *openapi3.T
	router routers.Router
	srv    *httptest.Server
	h      http.Handler
	opts   *openapi3filter.Options
	// hits counts the validated responses by operationId and status.
	hits      map[string]map[int]int
	validated int
	requests  int
	// revalidate sends every GET that answered 200 with an ETag again
	// with If-None-Match, which must answer 304 (off where a request
	// more would change what is tested, as under a spent rate limit).
	revalidate bool
}

// exchange is one request and the status it must get.
type exchange struct {
	method, path, token string
	body                []byte
	contentType         string
	header              http.Header
	want                int
	// checkRequest validates the request against the document too.
	checkRequest bool
}

func (a *apiCheck) request(t *testing.T, x exchange, base string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(x.method, base+Prefix+x.path, bytes.NewReader(x.body))
	if err != nil {
		t.Fatal(err)
	}
	if x.contentType != "" {
		req.Header.Set("Content-Type", x.contentType)
	}
	if x.token != "" {
		req.Header.Set("Authorization", "Bearer "+x.token)
	}
	for k, vs := range x.header {
		req.Header[k] = vs
	}
	return req
}

// do sends x to the server and validates the exchange.
func (a *apiCheck) do(t *testing.T, x exchange) []byte {
	t.Helper()
	req := a.request(t, x, a.srv.URL)
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", x.method, x.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a.check(t, x, resp.StatusCode, resp.Header, body)
	// Every read that answers 200 is revalidated with its ETag: 304, as
	// the document says.
	if tag := resp.Header.Get("ETag"); a.revalidate && x.method == http.MethodGet && resp.StatusCode == http.StatusOK && tag != "" && x.header.Get("If-None-Match") == "" {
		again := x
		again.header = x.header.Clone()
		if again.header == nil {
			again.header = http.Header{}
		}
		again.header.Set("If-None-Match", tag)
		again.want = http.StatusNotModified
		a.do(t, again)
	}
	return body
}

// declared serves x with a declared Content-Length of n, which the
// handler refuses (413) before reading the body; it goes straight to the
// handler, as a client cannot send a false length.
func (a *apiCheck) declared(t *testing.T, x exchange, n int64) {
	t.Helper()
	req := a.request(t, x, testPublicURL)
	req.ContentLength = n
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	a.check(t, x, rec.Code, rec.Header(), rec.Body.Bytes())
}

// check validates one exchange against the document.
func (a *apiCheck) check(t *testing.T, x exchange, status int, header http.Header, body []byte) {
	t.Helper()
	a.requests++
	what := fmt.Sprintf("%s %s", x.method, x.path)
	if status != x.want {
		t.Errorf("%s = %d; want %d: %s", what, status, x.want, clipBody(body))
	}
	req := a.request(t, x, a.srv.URL)
	route, params, err := a.router.FindRoute(req)
	if err != nil {
		t.Errorf("%s: no operation of the document: %v", what, err)
		return
	}
	if x.checkRequest {
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: a.opts}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("%s: the request does not match the document: %v", what, err)
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: a.opts},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                a.opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s: the %d response does not match the document: %v\nbody: %s", what, status, err, clipBody(body))
		return
	}
	id := route.Operation.OperationID
	if a.hits[id] == nil {
		a.hits[id] = map[int]int{}
	}
	a.hits[id][status]++
	if status != http.StatusNotModified { // kin-openapi passes a 304 unread
		a.validated++
	}
}

func clipBody(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// apiPart is a part of a multipart body: a text field, or a file when
// filename is set.
type apiPart struct {
	name, value, filename, contentType string
}

func openAPIForm(t *testing.T, parts ...apiPart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename == "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.filename))
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write([]byte(p.value))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// TestOpenAPIResponses sends requests for every documented operation
// (successes, and the 4xx a client can cause) and validates each response
// against the document.
func TestOpenAPIResponses(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		doc := openAPIDoc(t)
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			t.Fatalf("route the document: %v", err)
		}
		a := &apiCheck{
			doc: doc, router: router, srv: f.srv, h: f.handler, hits: map[string]map[int]int{}, revalidate: true,
			opts: &openapi3filter.Options{
				IncludeResponseStatus:   true,
				MultiError:              true,
				AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
				SchemaValidationOptions: doc.GetSchemaValidationOptions(),
			},
		}

		exerciseReads(t, a, f)
		exerciseOrderWrites(t, a, f)
		exerciseMaterialWrites(t, a, f)
		exerciseTextureWrites(t, a, f)
		exerciseOverrides(t, a, f)
		exerciseRateLimits(t, a, f)

		// Every operation answered its success at least once.
		var never []string
		documented := 0
		for key, op := range operations(doc) {
			documented++
			ok := false
			for status := range a.hits[op.OperationID] {
				ok = ok || (status >= 200 && status < 300)
			}
			if !ok {
				never = append(never, key+" ("+op.OperationID+")")
			}
		}
		slices.Sort(never)
		if len(never) > 0 {
			t.Errorf("operations never exercised successfully:\n  %s", strings.Join(never, "\n  "))
		}
		// Every documented status but 500 was provoked, so none is
		// documented that the code cannot give.
		var untried []string
		pairs := 0
		for key, op := range operations(doc) {
			for s := range op.Responses.Map() {
				status, _ := strconv.Atoi(s)
				pairs++
				if a.hits[op.OperationID][status] == 0 && status < 500 {
					untried = append(untried, key+" "+s)
				}
			}
		}
		slices.Sort(untried)
		exercised := 0
		for _, m := range a.hits {
			if len(m) > 0 {
				exercised++
			}
		}
		tried := 0
		for _, m := range a.hits {
			tried += len(m)
		}
		t.Logf("%d operations documented, %d exercised; %d requests, %d responses validated; %d of %d documented (operation, status) pairs seen",
			documented, exercised, a.requests, a.validated, tried, pairs)
		if len(untried) > 0 {
			t.Errorf("documented statuses no request provoked:\n  %s", strings.Join(untried, "\n  "))
		}
	})
}

// exerciseReads covers the read endpoints with their 400, 401 and 404,
// and the document itself; the share link is read in exerciseOverrides.
func exerciseReads(t *testing.T, a *apiCheck, f *fixture) {
	get := func(path, token string, want int) []byte {
		return a.do(t, exchange{method: http.MethodGet, path: path, token: token, want: want, checkRequest: want < 300})
	}
	tok := f.owner1
	type read struct {
		ok      []string // 200s
		bad     []string // 400s
		missing []string // 404s
	}
	reads := []read{
		{ok: []string{"/orders", "/orders?per_page=5&page=2&order_by=price&order=asc&configurator_id=1&start_date=2026-01-01&end_date=2026-12-31",
			"/orders?per_page=-1", "/orders?page=99"},
			bad: []string{"/orders?page=0", "/orders?status=paid", "/orders?start_date=2026-13-01", "/orders?per_page=101",
				"/orders?start_date=2026-03-02&end_date=2026-03-01"}},
		{ok: []string{"/orders/1"}, bad: []string{"/orders/abc", "/orders/0"}, missing: []string{"/orders/999999"}},
		{ok: []string{"/materials", "/materials?per_page=2&page=2&order_by=name&order=desc&category_id=1", "/materials?per_page=-1&texture_id=1"},
			bad: []string{"/materials?texture_id=0", "/materials?order_by=price"}},
		{ok: []string{"/materials/1"}, bad: []string{"/materials/1.5"}, missing: []string{"/materials/999999"}},
		{ok: []string{"/materials-categories/list", "/materials-categories/list?order_by=title&order=asc"},
			bad: []string{"/materials-categories/list?order_by=name"}},
		{ok: []string{"/textures", "/textures?per_page=3&page=2&order_by=id&category_id=1"}, bad: []string{"/textures?page=x"}},
		{ok: []string{"/textures/1"}, bad: []string{"/textures/-1"}, missing: []string{"/textures/999999"}},
		{ok: []string{"/configurator-forms"}},
		{ok: []string{"/configurator-forms/1"}, bad: []string{"/configurator-forms/x"}, missing: []string{"/configurator-forms/999999"}},
		{ok: []string{"/configurator-form-fields", "/configurator-form-fields?order_by=position&order=asc&per_page=2"},
			bad: []string{"/configurator-form-fields?per_page=0"}},
		{ok: []string{"/configurator-form-fields/2"}, bad: []string{"/configurator-form-fields/0"}, missing: []string{"/configurator-form-fields/999999"}},
		{ok: []string{"/configurator-options/types/list"}},
		{ok: []string{"/configurator-options", "/configurator-options?per_page=-1", "/configurator-options?order_by=title&order=desc&per_page=4&page=2"},
			bad: []string{"/configurator-options?order_by=name"}},
		{ok: []string{"/configurator-option/1"}, bad: []string{"/configurator-option/one"}, missing: []string{"/configurator-option/999999"}},
		{ok: []string{"/configurator-option-variations?configurator_option_id=1"},
			bad:     []string{"/configurator-option-variations", "/configurator-option-variations?configurator_option_id=0"},
			missing: []string{"/configurator-option-variations?configurator_option_id=999999"}},
		{ok: []string{"/configurator-option-sets"}},
	}
	for _, r := range reads {
		for _, p := range r.ok {
			get(p, tok, http.StatusOK)
		}
		for _, p := range r.bad {
			get(p, tok, http.StatusBadRequest)
		}
		for _, p := range r.missing {
			get(p, tok, http.StatusNotFound)
		}
		// 401: no token, and a revoked one.
		get(r.ok[0], "", http.StatusUnauthorized)
		get(r.ok[0], f.revoked, http.StatusUnauthorized)
	}
	// The dashboard token reads too.
	get("/materials/1", f.dash1, http.StatusOK)
	// order is read in any case; the document declares the lower-case
	// values, so this request is not checked against it.
	a.do(t, exchange{method: http.MethodGet, path: "/textures?order=DESC", token: tok, want: http.StatusOK})

	// The headers of a middle page carry both links.
	h := a.srv.Client()
	resp, err := h.Do(a.request(t, exchange{method: http.MethodGet, path: "/materials?per_page=2&page=2", token: tok}, a.srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if link := resp.Header.Get("Link"); !strings.Contains(link, `rel="next"`) || !strings.Contains(link, `rel="prev"`) {
		t.Errorf("GET /materials?per_page=2&page=2: Link %q; want next and prev", link)
	}

	// The document itself.
	a.do(t, exchange{method: http.MethodGet, path: "/openapi.json", want: http.StatusOK})
	a.do(t, exchange{method: http.MethodGet, path: "/openapi.json", token: "garbage", want: http.StatusOK})
	a.do(t, exchange{method: http.MethodGet, path: "/openapi.json", header: http.Header{"If-None-Match": {openAPIETag}}, want: http.StatusNotModified})
	a.do(t, exchange{method: http.MethodGet, path: "/openapi.json", header: http.Header{"If-Match": {`"another"`}}, want: http.StatusPreconditionFailed})
}

func jsonOf(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", clipBody(body), err)
	}
}

func randomBytes(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

func exerciseOrderWrites(t *testing.T, a *apiCheck, f *fixture) {
	img := string(testkit.PNG(8, 6, 1))
	order := func(extra ...apiPart) ([]byte, string) {
		parts := []apiPart{
			{name: "price", value: "249.90"},
			{name: "customer_details", value: `{"name":"Ada Lovelace","email":"ada@example.com"}`},
			{name: "configurator_summary", value: `{"Frame Size":"Grand"}`},
			{name: "configurator_id", value: "1"},
		}
		return openAPIForm(t, append(parts, extra...)...)
	}
	post := func(token string, body []byte, ct string, want int, checkRequest bool) []byte {
		return a.do(t, exchange{method: http.MethodPost, path: "/orders", token: token, body: body, contentType: ct, want: want, checkRequest: checkRequest})
	}

	body, ct := order(
		apiPart{name: "configurator_snapshot", filename: "snapshot.png", contentType: "image/png", value: img},
		apiPart{name: "configurator_print_map", filename: "front.png", contentType: "image/png", value: img},
		apiPart{name: "configurator_print_map", filename: "back.png", contentType: "image/png", value: img},
	)
	var created orderJSON
	jsonOf(t, post(f.owner1, body, ct, http.StatusCreated, true), &created)
	if created.ConfiguratorSnapshot == nil || len(created.ConfiguratorPrintMap) != 2 {
		t.Errorf("POST /orders: snapshot %v, print map %v; want both stored", created.ConfiguratorSnapshot, created.ConfiguratorPrintMap)
	}
	a.do(t, exchange{method: http.MethodGet, path: fmt.Sprintf("/orders/%d", created.ID), token: f.owner1, want: http.StatusOK})
	body, ct = order()
	post(f.owner1, body, ct, http.StatusCreated, true)

	body, ct = openAPIForm(t, apiPart{name: "price", value: "cheap"})
	post(f.owner1, body, ct, http.StatusBadRequest, false)
	body, ct = openAPIForm(t, apiPart{name: "price", value: "1"}, apiPart{name: "customer_details", value: "[]"},
		apiPart{name: "configurator_summary", value: "{}"}, apiPart{name: "configurator_id", value: "1"})
	post(f.owner1, body, ct, http.StatusBadRequest, false)
	body, ct = order(apiPart{name: "configurator_snapshot", filename: "notes.txt", contentType: "text/plain", value: "not an image"})
	post(f.owner1, body, ct, http.StatusBadRequest, false)
	body, ct = openAPIForm(t, apiPart{name: "price", value: "1"}, apiPart{name: "customer_details", value: "{}"},
		apiPart{name: "configurator_summary", value: "{}"}, apiPart{name: "configurator_id", value: "999999"})
	post(f.owner1, body, ct, http.StatusNotFound, false)
	body, ct = order(apiPart{name: "configurator_snapshot", filename: "huge.png", contentType: "image/png", value: randomBytes(testMaxFileBytes + 1)})
	post(f.owner1, body, ct, http.StatusRequestEntityTooLarge, false)
	post(f.owner1, []byte(`{"price": 1}`), "application/json", http.StatusUnsupportedMediaType, false)
	body, ct = order()
	post("", body, ct, http.StatusUnauthorized, false)
	a.declared(t, exchange{method: http.MethodPost, path: "/orders", token: f.owner1, body: body, contentType: ct, want: http.StatusRequestEntityTooLarge}, valid.MaxMultipartBody+1)

	// Idempotency-Key: created, replayed, refused for another request,
	// refused when malformed.
	keyed := func(key string, body []byte, ct string, want int) []byte {
		return a.do(t, exchange{method: http.MethodPost, path: "/orders", token: f.owner1, body: body, contentType: ct,
			header: http.Header{"Idempotency-Key": {key}}, want: want, checkRequest: want < 300})
	}
	body, ct = order()
	first := keyed("openapi-order-1", body, ct, http.StatusCreated)
	if again := keyed("openapi-order-1", body, ct, http.StatusCreated); !bytes.Equal(again, first) {
		t.Errorf("POST /orders replayed:\n%s\nwant the first answer:\n%s", again, first)
	}
	body, ct = order(apiPart{name: "configurator_snapshot", filename: "snapshot.png", contentType: "image/png", value: img})
	keyed("openapi-order-1", body, ct, http.StatusUnprocessableEntity)
	keyed(strings.Repeat("k", 256), body, ct, http.StatusBadRequest)

	// PATCH moves an order on (dashboard token of its owner).
	patch := func(path, token, ct, body string, want int) []byte {
		return a.do(t, exchange{method: http.MethodPatch, path: path, token: token, body: []byte(body), contentType: ct, want: want, checkRequest: want < 300})
	}
	const js = "application/json"
	p := fmt.Sprintf("/orders/%d", created.ID)
	var moved orderJSON
	jsonOf(t, patch(p, f.dash1, js, `{"status":"shipped","invoice_url":"https://shop.example.com/invoices/7","order_storefront":"Oslo"}`, http.StatusOK), &moved)
	if moved.Status != "shipped" || moved.InvoiceURL == nil || *moved.InvoiceURL != "https://shop.example.com/invoices/7" ||
		moved.OrderStorefront == nil || *moved.OrderStorefront != "Oslo" || moved.Configurator.ID != 1 || moved.Configurator.Name == "" {
		t.Errorf("PATCH %s: %+v; want shipped, its invoice and storefront, and its configurator", p, moved)
	}
	jsonOf(t, patch(p, f.dash1, js, `{"invoice_url":null}`, http.StatusOK), &moved)
	if moved.InvoiceURL != nil || moved.Status != "shipped" || moved.OrderStorefront == nil {
		t.Errorf("PATCH %s invoice_url null: %+v; want only the invoice cleared", p, moved)
	}
	for _, bad := range []struct{ body, field string }{
		{`{"status":""}`, "status"},
		{`{"status":"` + strings.Repeat("s", 65) + `"}`, "status"},
		{`{"status":null}`, "status"},
		{`{"invoice_url":"ftp://shop.example.com/1"}`, "invoice_url"},
		{`{"invoice_url":"/invoices/1"}`, "invoice_url"},
		{`{"order_storefront":"` + strings.Repeat("s", 256) + `"}`, "order_storefront"},
		{`{"colour":"red"}`, "colour"},
	} {
		var pr problem.Body
		jsonOf(t, patch(p, f.dash1, js, bad.body, http.StatusBadRequest), &pr)
		if len(pr.Errors) == 0 || pr.Errors[0].Name != bad.field {
			t.Errorf("PATCH %s %s: %+v; want 400 naming %s", p, bad.body, pr, bad.field)
		}
	}
	patch(p, f.owner1, js, `{"status":"shipped"}`, http.StatusForbidden)
	patch(p, "", js, `{"status":"shipped"}`, http.StatusUnauthorized)
	patch("/orders/999999", f.dash1, js, `{"status":"shipped"}`, http.StatusNotFound)
	patch(p, f.dash1, "text/plain", `{"status":"shipped"}`, http.StatusUnsupportedMediaType)
	a.declared(t, exchange{method: http.MethodPatch, path: p, token: f.dash1, body: []byte(`{}`), contentType: js, want: http.StatusRequestEntityTooLarge}, valid.MaxJSONBody+1)
}

func exerciseMaterialWrites(t *testing.T, a *apiCheck, f *fixture) {
	send := func(method, path, token, ct, body string, want int) []byte {
		return a.do(t, exchange{method: method, path: path, token: token, body: []byte(body), contentType: ct, want: want, checkRequest: want < 300})
	}
	const js = "application/json"
	walnut := `{"name":"OpenAPI Walnut","material_file":"https://cdn.example.com/walnut.glb","category_id":1,"texture_id":1,` +
		`"status":true,"material_type":"glossy","surface":"wood","bump":true,"color":"#5c4033","opacity":0.9,"specular":0.3,"reflection":0.1,"created_by":"api"}`
	var m materialJSON
	jsonOf(t, send(http.MethodPost, "/materials", f.dash1, js, walnut, http.StatusCreated), &m)
	send(http.MethodPost, "/materials", f.dash1, js, `{"name":"Plain"}`, http.StatusCreated)
	send(http.MethodPost, "/materials", f.owner1, js, walnut, http.StatusForbidden)
	send(http.MethodPost, "/materials", f.dash1, js, `{"color":"#FFFFFF"}`, http.StatusBadRequest)
	send(http.MethodPost, "/materials", f.dash1, js, `{"name":"x","colour":"#FFFFFF"}`, http.StatusBadRequest)
	send(http.MethodPost, "/materials", f.dash1, js, `{"name":"x","color":"red"}`, http.StatusBadRequest)
	send(http.MethodPost, "/materials", f.dash1, js, `{"name":"x","category_id":999999}`, http.StatusNotFound)
	send(http.MethodPost, "/materials", f.dash1, "text/plain", walnut, http.StatusUnsupportedMediaType)
	send(http.MethodPost, "/materials", f.dash1, js, `{"name":"`+strings.Repeat("x", valid.MaxJSONBody)+`"}`, http.StatusRequestEntityTooLarge)
	send(http.MethodPost, "/materials", "", js, walnut, http.StatusUnauthorized)

	p := fmt.Sprintf("/materials/%d", m.ID)
	var updated materialJSON
	jsonOf(t, send(http.MethodPut, p, f.dash1, js, `{"name":"OpenAPI Walnut II","texture_id":null,"material_file":"/files/walnut.glb"}`, http.StatusOK), &updated)
	if updated.TextureID != nil || updated.Name != "OpenAPI Walnut II" {
		t.Errorf("PUT %s: texture_id %v, name %q", p, updated.TextureID, updated.Name)
	}
	send(http.MethodPut, p, f.dash1, js, `{"name":null}`, http.StatusBadRequest)
	send(http.MethodPut, p, f.dash1, js, `{"opacity":2}`, http.StatusBadRequest)
	send(http.MethodPut, "/materials/999999", f.dash1, js, `{"name":"x"}`, http.StatusNotFound)
	send(http.MethodPut, p, f.owner1, js, `{"name":"x"}`, http.StatusForbidden)
	send(http.MethodPut, p, f.dash1, "text/plain", `{"name":"x"}`, http.StatusUnsupportedMediaType)
	send(http.MethodPut, p, "", js, `{"name":"x"}`, http.StatusUnauthorized)
	a.declared(t, exchange{method: http.MethodPut, path: p, token: f.dash1, body: []byte(`{}`), contentType: js, want: http.StatusRequestEntityTooLarge}, valid.MaxJSONBody+1)

	send(http.MethodDelete, p, f.owner1, "", "", http.StatusForbidden)
	send(http.MethodDelete, p, "", "", "", http.StatusUnauthorized)
	send(http.MethodDelete, p, f.dash1, "", "", http.StatusOK)
	send(http.MethodDelete, p, f.dash1, "", "", http.StatusNotFound)
	send(http.MethodDelete, "/materials/abc", f.dash1, "", "", http.StatusBadRequest)
}

func exerciseTextureWrites(t *testing.T, a *apiCheck, f *fixture) {
	img := string(testkit.PNG(8, 6, 2))
	bump := string(testkit.PNG(8, 6, 3))
	send := func(method, path, token string, body []byte, ct string, want int) []byte {
		return a.do(t, exchange{method: method, path: path, token: token, body: body, contentType: ct, want: want, checkRequest: want < 300})
	}
	body, ct := openAPIForm(t,
		apiPart{name: "name", value: "OpenAPI Linen"},
		apiPart{name: "category_id", value: "1"},
		apiPart{name: "file", filename: "linen.png", contentType: "image/png", value: img},
		apiPart{name: "bump_file", filename: "linen-bump.png", contentType: "image/png", value: bump},
	)
	var created textureCreatedJSON
	jsonOf(t, send(http.MethodPost, "/textures", f.dash1, body, ct, http.StatusCreated), &created)
	if created.Texture.TextureThumbnail50 == nil || created.Texture.BumpFile == nil {
		t.Errorf("POST /textures: %+v; want thumbnails and a bump file", created.Texture)
	}
	send(http.MethodPost, "/textures", f.owner1, body, ct, http.StatusForbidden)
	send(http.MethodPost, "/textures", "", body, ct, http.StatusUnauthorized)
	b2, ct2 := openAPIForm(t, apiPart{name: "name", value: "No file"})
	send(http.MethodPost, "/textures", f.dash1, b2, ct2, http.StatusBadRequest)
	b2, ct2 = openAPIForm(t, apiPart{name: "name", value: "Lost"}, apiPart{name: "category_id", value: "999999"},
		apiPart{name: "file", filename: "t.png", contentType: "image/png", value: img})
	send(http.MethodPost, "/textures", f.dash1, b2, ct2, http.StatusNotFound)
	b2, ct2 = openAPIForm(t, apiPart{name: "name", value: "Huge"},
		apiPart{name: "file", filename: "huge.png", contentType: "image/png", value: randomBytes(testMaxFileBytes + 1)})
	send(http.MethodPost, "/textures", f.dash1, b2, ct2, http.StatusRequestEntityTooLarge)
	send(http.MethodPost, "/textures", f.dash1, []byte(`{"name":"x"}`), "application/json", http.StatusUnsupportedMediaType)

	p := fmt.Sprintf("/textures/%d", created.ID)
	send(http.MethodPut, p, f.dash1, []byte(`{"name":"OpenAPI Linen II","category_id":null}`), "application/json", http.StatusOK)
	b2, ct2 = openAPIForm(t, apiPart{name: "name", value: "OpenAPI Linen III"}, apiPart{name: "category_id", value: "2"},
		apiPart{name: "file", filename: "linen2.png", contentType: "image/png", value: bump})
	var updated textureJSON
	jsonOf(t, send(http.MethodPut, p, f.dash1, b2, ct2, http.StatusOK), &updated)
	if updated.CategoryID == nil || *updated.CategoryID != 2 || updated.Name != "OpenAPI Linen III" {
		t.Errorf("PUT %s (multipart): %+v", p, updated)
	}
	send(http.MethodPut, p, f.dash1, []byte(`{"name":null}`), "application/json", http.StatusBadRequest)
	send(http.MethodPut, "/textures/999999", f.dash1, []byte(`{"name":"x"}`), "application/json", http.StatusNotFound)
	send(http.MethodPut, p, f.owner1, []byte(`{"name":"x"}`), "application/json", http.StatusForbidden)
	send(http.MethodPut, p, f.dash1, []byte(`name=x`), "text/plain", http.StatusUnsupportedMediaType)
	send(http.MethodPut, p, "", []byte(`{"name":"x"}`), "application/json", http.StatusUnauthorized)
	b2, ct2 = openAPIForm(t, apiPart{name: "file", filename: "huge.png", contentType: "image/png", value: randomBytes(testMaxFileBytes + 1)})
	send(http.MethodPut, p, f.dash1, b2, ct2, http.StatusRequestEntityTooLarge)

	send(http.MethodDelete, p, f.owner1, nil, "", http.StatusForbidden)
	send(http.MethodDelete, p, "", nil, "", http.StatusUnauthorized)
	send(http.MethodDelete, p, f.dash1, nil, "", http.StatusOK)
	send(http.MethodDelete, p, f.dash1, nil, "", http.StatusNotFound)
	send(http.MethodDelete, "/textures/0", f.dash1, nil, "", http.StatusBadRequest)
}

// exerciseOverrides sets overrides for configurator 1's options, read
// through the API first, and opens the share link.
func exerciseOverrides(t *testing.T, a *apiCheck, f *fixture) {
	var options []optionJSON
	jsonOf(t, a.do(t, exchange{method: http.MethodGet, path: "/configurator-options?per_page=-1", token: f.owner1, want: http.StatusOK}), &options)
	selectLike := map[string]bool{"select": true, "radio": true, "checkbox": true, "select_thumb": true, "arrows": true}
	overrides := map[string]any{}
	var chosen, chosenVariation int
	for _, o := range options {
		if o.ConfiguratorID != 1 || len(o.ParameterList) == 0 {
			continue
		}
		v := o.ParameterList[len(o.ParameterList)-1]
		switch {
		case selectLike[o.Type] && chosen == 0:
			// The last variation, which the demo does not select.
			chosen, chosenVariation = o.ID, v.ID
			overrides[strconv.Itoa(o.ID)] = map[string]any{"id": v.ID}
		case o.Type == "material" && len(overrides) < 3:
			overrides[strconv.Itoa(o.ID)] = map[string]any{"id": v.ID, "material_id": 1, "selected_parts": []string{"seat", "back"}}
		case o.Type == "text" && len(overrides) < 3:
			overrides[strconv.Itoa(o.ID)] = map[string]any{"id": v.ID, "text_value": "Ada", "custom_color": true}
		}
	}
	if chosen == 0 {
		t.Fatalf("configurator 1 has no select-like option with variations: %+v", options)
	}
	a.do(t, exchange{method: http.MethodGet, path: fmt.Sprintf("/configurator-option-variations?configurator_option_id=%d", chosen), token: f.owner1, want: http.StatusOK})
	raw, _ := json.Marshal(overrides)
	var decoded any
	json.Unmarshal(raw, &decoded)
	if err := a.doc.Components.Schemas["OptionOverrides"].Value.VisitJSON(decoded); err != nil {
		t.Errorf("the overrides sent do not match components.schemas.OptionOverrides: %v", err)
	}

	const p = "/configurator-options/set/new-options"
	post := func(token string, body []byte, ct string, want int) []byte {
		return a.do(t, exchange{method: http.MethodPost, path: p, token: token, body: body, contentType: ct, want: want, checkRequest: want < 300})
	}
	body, ct := openAPIForm(t, apiPart{name: "options", value: string(raw)})
	var env struct {
		Success bool
		Data    string
	}
	jsonOf(t, post(f.owner1, body, ct, http.StatusOK), &env)
	form := url.Values{"options": {string(raw)}}.Encode()
	var again struct{ Data string }
	jsonOf(t, post(f.owner1, []byte(form), "application/x-www-form-urlencoded", http.StatusOK), &again)
	if !env.Success || !strings.HasPrefix(env.Data, testShareBase) || again.Data != env.Data {
		t.Errorf("overrides: %+v, then %q; want one share URL under %s", env, again.Data, testShareBase)
	}

	bad, bct := openAPIForm(t, apiPart{name: "options", value: `{"999999":{"id":1}}`})
	post(f.owner1, bad, bct, http.StatusBadRequest)
	bad, bct = openAPIForm(t, apiPart{name: "other", value: "x"})
	post(f.owner1, bad, bct, http.StatusBadRequest)
	post(f.dash1, body, ct, http.StatusForbidden)
	post("", body, ct, http.StatusUnauthorized)
	post(f.revoked, body, ct, http.StatusUnauthorized)
	post(f.owner1, raw, "application/json", http.StatusUnsupportedMediaType)
	a.declared(t, exchange{method: http.MethodPost, path: p, token: f.owner1, body: body, contentType: ct, want: http.StatusRequestEntityTooLarge}, valid.MaxMultipartBody+1)

	// The share link: the key is the credential.
	key := path.Base(env.Data)
	var shared sharedJSON
	jsonOf(t, a.do(t, exchange{method: http.MethodGet, path: "/shared/" + key, want: http.StatusOK, checkRequest: true}), &shared)
	found := false
	for _, o := range shared.Options {
		if o.ID != chosen {
			continue
		}
		for _, v := range o.ParameterList {
			if v.Selected != (v.ID == chosenVariation) {
				t.Errorf("shared option %d: variation %d selected = %v", o.ID, v.ID, v.Selected)
			}
			found = found || v.ID == chosenVariation
		}
	}
	if !found {
		t.Errorf("shared configurator lacks option %d variation %d", chosen, chosenVariation)
	}
	a.do(t, exchange{method: http.MethodGet, path: "/shared/" + key, token: "garbage", want: http.StatusOK})
	a.do(t, exchange{method: http.MethodGet, path: "/shared/" + strings.Repeat("0", 32), want: http.StatusNotFound})
	a.do(t, exchange{method: http.MethodGet, path: "/shared/not-a-key", want: http.StatusNotFound})
}
