package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/storage"
)

var update = flag.Bool("update", false, "rewrite rest/testdata/*.golden from the responses")

// testPublicURL is the PublicURL of the fixture, so that the page URLs in
// golden files do not depend on the test server's port.
const testPublicURL = "http://api.test"

// testMaxFileBytes is the fixture's limit on one stored file: small, so
// that the size refusal is cheap to provoke.
const testMaxFileBytes = 256 << 10

// testShareBase starts the share links of the fixture.
const testShareBase = "http://viewer.test/share/"

// fixture is the demo dataset behind the v1 handler, mounted at Prefix
// exactly as cmd/server mounts it, with tokens of both demo owners.
type fixture struct {
	c      *ent.Client
	srv    *httptest.Server
	tokens *auth.Tokens
	// gql is the GraphQL endpoint over the same database, behind the
	// same auth middleware, for parity checks.
	gql http.Handler
	// handler is the server's whole router (v1 at Prefix, files at
	// /files/), for requests a client would not send as they are.
	handler http.Handler
	// files stores the uploads of the write endpoints in store, served
	// at testPublicURL/files/ by the fixture's server.
	files *storage.Files
	store *storage.Memory

	owner1  string // Open API token of configurator 1 (owner 1)
	owner2  string // Open API token of configurator 3 (owner 2)
	dash1   string // dashboard token of owner 1
	revoked string // a revoked Open API token of configurator 1
	foreign string // an Open API token signed with another key
}

// newFixture seeds the demo data into c and starts the v1 server.
func newFixture(t *testing.T, c *ent.Client) *fixture {
	t.Helper()
	ctx := context.Background()
	if _, err := demo.Seed(ctx, c); err != nil {
		t.Fatalf("seed demo data: %v", err)
	}
	f := &fixture{c: c, tokens: dbtest.Tokens(c)}
	f.owner1, _ = dbtest.OpenAPI(t, f.tokens, 1)
	f.owner2, _ = dbtest.OpenAPI(t, f.tokens, 3)
	f.dash1, _ = dbtest.Dashboard(t, f.tokens, 1)
	var rec *ent.APIToken
	f.revoked, rec = dbtest.OpenAPI(t, f.tokens, 1)
	if err := f.tokens.Revoke(ctx, rec.ID); err != nil {
		t.Fatalf("revoke token: %v", err)
	}
	other := auth.NewTokens(c, auth.NewSigner([]byte("fedcba9876543210fedcba9876543210")))
	f.foreign, _ = dbtest.OpenAPI(t, other, 1)

	f.store = storage.NewMemory()
	f.files = &storage.Files{Store: f.store, BaseURL: testPublicURL + "/files/", MaxBytes: testMaxFileBytes}
	opts := []graph.Option{graph.WithFiles(f.files), graph.WithShareBase(testShareBase)}
	r := chi.NewRouter()
	res := graph.NewResolver(c, opts...)
	r.Mount(Prefix, New(res, f.tokens, Options{PublicURL: testPublicURL}))
	r.Handle("/files/*", http.StripPrefix("/files/", f.files.Handler()))
	f.handler = r
	f.srv = httptest.NewServer(r)
	t.Cleanup(f.srv.Close)
	f.gql = endpoint.NewHandler(res, f.tokens, endpoint.HandlerOptions{})
	return f
}

// get sends GET Prefix+path with a bearer token ("" sends none) and
// returns the status, header and body.
func (f *fixture) get(t *testing.T, token, path string) (int, http.Header, []byte) {
	t.Helper()
	return f.do(t, f.request(t, http.MethodGet, path, token, nil))
}

// request builds a request to Prefix+path with a bearer token ("" for
// none).
func (f *fixture) request(t *testing.T, method, path, token string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+Prefix+path, body)
	if err != nil {
		t.Fatalf("request %s %s: %v", method, path, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// do sends req and returns the status, header and body.
func (f *fixture) do(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	// Every JSON answer declares its length (writeBody): a chunked one
	// costs the connection and the client a write and a read more.
	if ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); req.Method != http.MethodHead &&
		(ct == "application/json" || ct == "application/problem+json") && resp.ContentLength != int64(len(body)) {
		t.Errorf("%s %s: %s answer of %d bytes declares length %d (chunked: %v)",
			req.Method, req.URL, ct, len(body), resp.ContentLength, resp.TransferEncoding)
	}
	return resp.StatusCode, resp.Header, body
}

// ok gets path with token, expects 200 and JSON, and decodes the body
// into v.
func (f *fixture) ok(t *testing.T, token, path string, v any) http.Header {
	t.Helper()
	status, h, body := f.get(t, token, path)
	if status != http.StatusOK {
		t.Fatalf("GET %s = %d; want 200: %s", path, status, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type = %q; want application/json", path, ct)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: decode %s: %v", path, body, err)
	}
	return h
}

// ids gets a list at path (a bare array, or the order envelope's data)
// and returns the ids of its items in order.
func (f *fixture) ids(t *testing.T, token, path string) []int {
	t.Helper()
	var raw json.RawMessage
	f.ok(t, token, path, &raw)
	var items []struct{ ID int }
	if bytes.HasPrefix(raw, []byte("{")) {
		var env struct{ Data json.RawMessage }
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		raw = env.Data
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("GET %s: items: %v: %s", path, err, raw)
	}
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// problemOf decodes a problem+json answer, failing unless it has status.
func problemOf(t *testing.T, what string, status int, h http.Header, body []byte, want int) problem.Body {
	t.Helper()
	if status != want {
		t.Fatalf("%s = %d; want %d: %s", what, status, want, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s: Content-Type = %q; want application/problem+json", what, ct)
	}
	var p problem.Body
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%s: decode problem %s: %v", what, body, err)
	}
	if p.Status != want || p.Type != "about:blank" || p.Title != http.StatusText(want) || p.Detail == "" || p.Code == "" {
		t.Fatalf("%s: problem = %+v; want about:blank, status %d, a title, detail and code", what, p, want)
	}
	return p
}

// golden compares a JSON body, indented, with testdata/name.golden, or
// rewrites the file under -update. Every backend compares with the same
// file.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: body is not JSON: %v: %s", name, err, body)
	}
	got := buf.Bytes()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./rest -update to create it)", name, err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("%s: body differs from %s (go test ./rest -update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// otherCatalogue gives owner 2, who has no catalogue in the demo data, a
// material category, a texture and a material, so that tenancy can be
// checked on those too. It returns their ids.
func otherCatalogue(t *testing.T, c *ent.Client) (categoryID, textureID, materialID int) {
	t.Helper()
	ctx := dbtest.Sys
	cat := dbtest.Must(c.MaterialCategory.Create().SetOwnerID(2).SetTitle("Paints").Save(ctx))
	tex := dbtest.Must(c.Texture.Create().SetOwnerID(2).SetName("Carbon Weave").SetCategoryID(cat.ID).Save(ctx))
	mat := dbtest.Must(c.Material.Create().SetOwnerID(2).SetName("Carbon").SetCategoryID(cat.ID).
		SetTextureID(tex.ID).Save(ctx))
	return cat.ID, tex.ID, mat.ID
}

// graphql runs a GraphQL query with token through the real GraphQL
// handler and decodes its data into v, failing on any error.
func (f *fixture) graphql(t *testing.T, token, query string, vars map[string]any, v any) {
	t.Helper()
	data, codes := f.graphqlResult(t, token, query, vars)
	if len(codes) > 0 {
		t.Fatalf("graphql %s %v: errors %v", strings.Join(strings.Fields(query), " "), vars, codes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("graphql: decode %s: %v", data, err)
	}
}

// graphqlResult runs a GraphQL query with token and returns its data and
// the extensions.code of its errors.
func (f *fixture) graphqlResult(t *testing.T, token, query string, vars map[string]any) (json.RawMessage, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	f.gql.ServeHTTP(rec, req)
	var resp struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("graphql %s %v = %d: %s", strings.Join(strings.Fields(query), " "), vars, rec.Code, rec.Body.String())
	}
	var codes []string
	for _, e := range resp.Errors {
		codes = append(codes, e.Extensions.Code+": "+e.Message)
	}
	return resp.Data, codes
}
