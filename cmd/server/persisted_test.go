package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestPersistedDocumentsServed: serve wires the persisted documents as
// configured. Two replicas over one REDIS_URL with a manifest and
// PERSISTED_ONLY: a dashboard token registers an APQ document on one and
// runs it by hash on the other; an Open API token runs the manifest's
// document by hash and is refused its text otherwise (400
// PERSISTED_QUERY_ONLY).
func TestPersistedDocumentsServed(t *testing.T) {
	srv := testkit.StartRedis(t)
	c := dbtest.Open(t, dbtest.SQLite(t))
	tokens, open := seeded(t, c)
	dash, _ := dbtest.Dashboard(t, tokens, 1)
	const trusted, free = "query Me { viewer { tokenKind } }", "query Kinds { configuratorOptionTypes }"
	manifest, err := persisted.ParseManifest([]byte(`{"` + persisted.Hash(trusted) + `": "` + trusted + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	replica := func() http.Handler {
		cfg := &config.Config{PublicURL: "http://localhost", ViewerURL: "http://localhost/share/", RedisURL: srv.URL(),
			Trusted: manifest, PersistedOnly: true}
		files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
		a := newRouter(c, tokens, cfg, files, slog.New(slog.NewTextHandler(io.Discard, nil)))
		t.Cleanup(func() { a.apq.Close() })
		return a
	}
	one, two := replica(), replica()
	post := func(h http.Handler, token string, body map[string]any) (int, string) {
		t.Helper()
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	apq := func(doc string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": persisted.Hash(doc)}}
	}

	if code, body := post(one, dash, map[string]any{"query": free, "extensions": apq(free)}); code != http.StatusOK || !strings.Contains(body, `"select"`) {
		t.Fatalf("a dashboard token's registration on one: %d %s", code, body)
	}
	if code, body := post(two, dash, map[string]any{"extensions": apq(free)}); code != http.StatusOK || !strings.Contains(body, `"select"`) {
		t.Errorf("a dashboard token's hash on two: %d %s; want the document registered on one", code, body)
	}
	if code, body := post(two, open, map[string]any{"extensions": apq(trusted)}); code != http.StatusOK || body != `{"data":{"viewer":{"tokenKind":"open_api"}}}` {
		t.Errorf("an Open API token's hash of the manifest's document: %d %s", code, body)
	}
	if code, body := post(one, open, map[string]any{"query": free}); code != http.StatusBadRequest || !strings.Contains(body, `"code":"PERSISTED_QUERY_ONLY"`) ||
		!strings.Contains(body, `"requestId":"`) {
		t.Errorf("an Open API token's free-form document: %d %s; want 400 PERSISTED_QUERY_ONLY with the requestId", code, body)
	}
	rec := httptest.NewRecorder()
	one.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "\napq_redis_up 1\n") {
		t.Errorf("/metrics does not say apq_redis_up 1:\n%s", rec.Body.String())
	}
}

// TestPersistedDocumentsRefused: serve does not start with PERSISTED_ONLY
// and no manifest, nor with a manifest whose key is not its document's
// SHA-256; it says why and exits 2, before it opens the database.
func TestPersistedDocumentsRefused(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "persisted-documents.json")
	if err := os.WriteFile(bad, []byte(`{"`+persisted.Hash("{ a }")+`": "{ b }"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PERSISTED_ONLY": "true"}, "--persisted-only (PERSISTED_ONLY) needs --persisted-documents"},
		{map[string]string{"PERSISTED_DOCUMENTS": bad}, "--persisted-documents " + bad + ": key"},
	} {
		tc.env["DATABASE_URL"] = "postgres://127.0.0.1:1/never"
		if code, _, stderr := cli(t, tc.env, "serve"); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve with %v: exit %d %q; want %d saying %q", tc.env, code, stderr, exitUsage, tc.want)
		}
	}
}
