package graph_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/requestid"
	"github.com/configurator/catalogue/internal/testkit"
)

// Documents of the persisted-document tests: trusted is in the manifest,
// free is not.
const (
	trustedDoc = "query Viewer { viewer { ownerID tokenKind } }"
	freeDoc    = "query Count { materials { totalCount } }"
)

// trustedManifest is the manifest of trustedDoc.
func trustedManifest(t *testing.T) *persisted.Manifest {
	t.Helper()
	m, err := persisted.ParseManifest([]byte(`{"` + persisted.Hash(trustedDoc) + `": "` + trustedDoc + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// pq is the APQ extension naming doc.
func pq(doc string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": persisted.Hash(doc)}}
}

// persistedHandler is the world's endpoint with opts, behind the request
// ids as the router mounts it.
func (w *world) persistedHandler(opts endpoint.HandlerOptions) http.Handler {
	res := graph.NewResolver(w.c, graph.WithFiles(w.files), graph.WithShareBase(shareBase))
	return requestid.Middleware()(endpoint.NewHandler(res, w.tokens, opts))
}

// send sends a GraphQL request of the entries of req (query, documentId,
// extensions, ...) to h with token: a POST with a JSON body, or a GET
// with the entries in the query string (objects as JSON). Its
// X-Request-Id is "req-1".
func send(t *testing.T, h http.Handler, method, token string, req map[string]any) gqlResponse {
	t.Helper()
	var r *http.Request
	if method == http.MethodGet {
		q := url.Values{}
		for k, v := range req {
			if s, ok := v.(string); ok {
				q.Set(k, s)
			} else {
				b, _ := json.Marshal(v)
				q.Set(k, string(b))
			}
		}
		r = httptest.NewRequest(http.MethodGet, "/graphql?"+q.Encode(), nil)
	} else {
		b, _ := json.Marshal(req)
		r = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(b)))
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	r.Header.Set("X-Request-Id", "req-1")
	resp, _ := serveGQL(t, h, r)
	return resp
}

// wantData fails unless r is a 200 with data and no error; it returns the
// data.
func wantData(t *testing.T, what string, r gqlResponse) string {
	t.Helper()
	if r.Status != http.StatusOK || len(r.Errors) > 0 || len(r.Data) == 0 || string(r.Data) == "null" {
		t.Fatalf("%s: %d %+v %s; want 200 with data", what, r.Status, r.Errors, r.Data)
	}
	return string(r.Data)
}

// wantError fails unless r is status with a first error of code, carrying
// the request's id, and no data.
func wantError(t *testing.T, what string, r gqlResponse, status int, code string) {
	t.Helper()
	if r.Status != status || r.code() != code || r.Data != nil || r.Errors[0].Extensions["requestId"] != "req-1" {
		t.Fatalf("%s: %d %+v %s; want %d %s with the requestId and no data", what, r.Status, r.Errors, r.Data, status, code)
	}
}

// TestAPQ: a document registered with its hash is served by the hash
// alone, over POST and GET; an unknown hash is PERSISTED_QUERY_NOT_FOUND
// (the APQ protocol's answer, on which clients send the text); a hash
// that is not the document's, a malformed extension and a document over
// the size limit are refused and not kept.
func TestAPQ(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		h := w.persistedHandler(endpoint.HandlerOptions{})
		r := send(t, h, http.MethodPost, w.tokA, map[string]any{"extensions": pq(freeDoc)})
		wantError(t, "hash of an unknown document", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
		if r.Errors[0].Message != "PersistedQueryNotFound" {
			t.Errorf("message %q; want PersistedQueryNotFound, which APQ clients look for", r.Errors[0].Message)
		}
		want := wantData(t, "registration", send(t, h, http.MethodPost, w.tokA, map[string]any{"query": freeDoc, "extensions": pq(freeDoc)}))
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			if got := wantData(t, method+" by hash", send(t, h, method, w.tokA, map[string]any{"extensions": pq(freeDoc)})); got != want {
				t.Errorf("%s by hash: %s; want %s", method, got, want)
			}
		}

		const other = "{ viewer { ownerID } }"
		r = send(t, h, http.MethodPost, w.tokA, map[string]any{"query": other, "extensions": pq(freeDoc + " ")})
		wantError(t, "a hash that is not the document's", r, http.StatusOK, "BAD_REQUEST")
		r = send(t, h, http.MethodPost, w.tokA, map[string]any{"extensions": pq(other)})
		wantError(t, "the document of a refused registration", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
		for name, ext := range map[string]any{
			"not an object":   "abc",
			"short hash":      map[string]any{"version": 1, "sha256Hash": "abc"},
			"no hash":         map[string]any{"version": 1},
			"another version": map[string]any{"version": 2, "sha256Hash": persisted.Hash(freeDoc)},
		} {
			r := send(t, h, http.MethodPost, w.tokA, map[string]any{"extensions": map[string]any{"persistedQuery": ext}})
			wantError(t, name, r, http.StatusOK, "BAD_REQUEST")
			if !strings.Contains(r.Errors[0].Message, "extensions.persistedQuery") {
				t.Errorf("%s: message %q; want it to name extensions.persistedQuery", name, r.Errors[0].Message)
			}
		}

		huge := "{ viewer { ownerID } }" + strings.Repeat(" ", endpoint.MaxDocumentBytes)
		r = send(t, h, http.MethodPost, w.tokA, map[string]any{"query": huge, "extensions": pq(huge)})
		wantError(t, "registration over the size limit", r, http.StatusOK, "QUERY_TOO_COMPLEX")
		r = send(t, h, http.MethodPost, w.tokA, map[string]any{"extensions": pq(huge)})
		wantError(t, "the document over the size limit", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
	})
}

// TestAPQSharedByRedis: two endpoints (two replicas) over one Redis: what
// one registers the other serves by its hash. With Redis down, a
// registration still succeeds and its replica serves it from its own
// cache, and the other answers PERSISTED_QUERY_NOT_FOUND rather than an
// error of its own: the client sends the text again.
func TestAPQSharedByRedis(t *testing.T) {
	srv := testkit.StartRedis(t)
	opts, err := ratelimit.RedisOptions(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		srv.Do(t, "FLUSHALL")
		w := newWorld(t, c)
		logs := &testkit.SyncBuffer{}
		replica := func() http.Handler {
			cache := persisted.NewRedis(opts, persisted.NewMemory(persisted.DefaultMemoryBytes), slog.New(slog.NewTextHandler(logs, nil)))
			t.Cleanup(func() { cache.Close() })
			return w.persistedHandler(endpoint.HandlerOptions{APQ: cache})
		}
		one, two := replica(), replica()
		want := wantData(t, "registration on one", send(t, one, http.MethodPost, w.tokA, map[string]any{"query": freeDoc, "extensions": pq(freeDoc)}))
		if got := wantData(t, "by hash on two", send(t, two, http.MethodGet, w.tokA, map[string]any{"extensions": pq(freeDoc)})); got != want {
			t.Errorf("by hash on two: %s; want %s", got, want)
		}

		srv.Kill()
		defer srv.Start()
		const during = "query During { viewer { ownerID } }"
		wantData(t, "registration with Redis down", send(t, one, http.MethodPost, w.tokA, map[string]any{"query": during, "extensions": pq(during)}))
		wantData(t, "by hash on the same replica with Redis down", send(t, one, http.MethodPost, w.tokA, map[string]any{"extensions": pq(during)}))
		r := send(t, two, http.MethodPost, w.tokA, map[string]any{"extensions": pq(during)})
		wantError(t, "by hash on the other replica with Redis down", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
		if !strings.Contains(logs.String(), "Redis is unreachable") {
			t.Errorf("the outage was not logged:\n%s", logs)
		}
	})
}

// TestTrustedDocuments: a document of the manifest is served by its hash
// without ever being sent, over POST and GET, named by
// extensions.persistedQuery or by a top-level documentId (bare, as
// graphql-codegen's client preset keeps it, or sha256:-prefixed, as the
// GraphQL over HTTP proposal writes it); a documentId beside a query, or
// malformed, is refused.
func TestTrustedDocuments(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		manifest := trustedManifest(t)
		h := w.persistedHandler(endpoint.HandlerOptions{Trusted: manifest})
		want := `{"viewer":{"ownerID":"` + strconv.Itoa(w.a.ID) + `","tokenKind":"open_api"}}`
		hash := persisted.Hash(trustedDoc)
		for _, tc := range []struct {
			name string
			req  map[string]any
		}{
			{"extensions.persistedQuery", map[string]any{"extensions": pq(trustedDoc)}},
			{"documentId", map[string]any{"documentId": hash}},
			{"documentId with sha256:", map[string]any{"documentId": "sha256:" + hash}},
			{"its text", map[string]any{"query": trustedDoc}},
		} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				if got := wantData(t, method+" "+tc.name, send(t, h, method, w.tokA, tc.req)); got != want {
					t.Errorf("%s %s: %s; want %s", method, tc.name, got, want)
				}
			}
		}
		for _, tc := range []struct {
			name, want string
			req        map[string]any
		}{
			{"documentId and query", "send it without query", map[string]any{"documentId": hash, "query": trustedDoc}},
			{"documentId and extension", "send it without query", map[string]any{"documentId": hash, "extensions": pq(trustedDoc)}},
			{"documentId of sha1", "documentId must be", map[string]any{"documentId": hash[:40]}},
			{"documentId of another algorithm", "documentId must be", map[string]any{"documentId": "md5:" + hash}},
		} {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				r := send(t, h, method, w.tokA, tc.req)
				wantError(t, method+" "+tc.name, r, http.StatusBadRequest, "BAD_REQUEST")
				if !strings.Contains(r.Errors[0].Message, tc.want) {
					t.Errorf("%s %s: message %q; want it to say %q", method, tc.name, r.Errors[0].Message, tc.want)
				}
			}
		}
		r := send(t, h, http.MethodPost, w.tokA, map[string]any{"documentId": persisted.Hash(freeDoc)})
		wantError(t, "documentId of an unknown document", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
	})
}

// TestTrustedOnly: with PERSISTED_ONLY an Open API token, and a request
// without one, runs manifest documents only: a free-form document, an APQ
// registration or a hash outside the manifest (even one a dashboard token
// registered) is refused with PERSISTED_QUERY_ONLY, HTTP 400 whatever the
// answer's media type, or PERSISTED_QUERY_NOT_FOUND; a dashboard token
// sends any document, as the playground does.
func TestTrustedOnly(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		manifest := trustedManifest(t)
		h := w.persistedHandler(endpoint.HandlerOptions{Trusted: manifest, TrustedOnly: true})
		for _, token := range []string{w.tokA, w.dashA} {
			for _, req := range []map[string]any{{"extensions": pq(trustedDoc)}, {"documentId": persisted.Hash(trustedDoc)}, {"query": trustedDoc}} {
				wantData(t, "a manifest document", send(t, h, http.MethodPost, token, req))
			}
		}

		wantData(t, "a dashboard token's free-form document", send(t, h, http.MethodPost, w.dashA, map[string]any{"query": freeDoc}))
		wantData(t, "a dashboard token's registration", send(t, h, http.MethodPost, w.dashA, map[string]any{"query": freeDoc, "extensions": pq(freeDoc)}))
		wantData(t, "a dashboard token's hash", send(t, h, http.MethodGet, w.dashA, map[string]any{"extensions": pq(freeDoc)}))

		for _, tc := range []struct {
			name, method, token string
			req                 map[string]any
		}{
			{"free-form", http.MethodPost, w.tokA, map[string]any{"query": freeDoc}},
			{"free-form over GET", http.MethodGet, w.tokA, map[string]any{"query": freeDoc}},
			{"registration", http.MethodPost, w.tokA, map[string]any{"query": "{ viewer { ownerID } }", "extensions": pq("{ viewer { ownerID } }")}},
			{"free-form without a token", http.MethodPost, "", map[string]any{"query": "{ __typename }"}},
		} {
			r := send(t, h, tc.method, tc.token, tc.req)
			wantError(t, tc.name, r, http.StatusBadRequest, "PERSISTED_QUERY_ONLY")
			if !strings.Contains(r.Errors[0].Message, "only trusted documents are accepted") {
				t.Errorf("%s: message %q; want it to say only trusted documents are accepted", tc.name, r.Errors[0].Message)
			}
		}
		r := send(t, h, http.MethodPost, w.tokA, map[string]any{"extensions": pq(freeDoc)})
		wantError(t, "an Open API token's hash of a dashboard token's registration", r, http.StatusOK, "PERSISTED_QUERY_NOT_FOUND")
		if !strings.Contains(r.Errors[0].Message, "no trusted document has the hash "+persisted.Hash(freeDoc)) {
			t.Errorf("message %q; want it to name the hash", r.Errors[0].Message)
		}
	})
}

// TestTrustedOnlyOverWebSocket: under PERSISTED_ONLY the token of a
// WebSocket's connection_init decides as a request's does: an Open API
// token runs the manifest's document by hash and is refused a free-form
// one with PERSISTED_QUERY_ONLY; a dashboard token runs it.
func TestTrustedOnlyOverWebSocket(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv := httptest.NewServer(w.persistedHandler(endpoint.HandlerOptions{Trusted: trustedManifest(t), TrustedOnly: true}))
		defer srv.Close()
		run := func(token string, payload map[string]any) map[string]any {
			t.Helper()
			ws := dialWS(t, srv.URL, token)
			ws.send(map[string]any{"id": "1", "type": "subscribe", "payload": payload})
			m := ws.read(10 * time.Second)
			if m == nil {
				t.Fatal("no answer")
			}
			return m
		}
		if b, _ := json.Marshal(run(w.tokA, map[string]any{"extensions": pq(trustedDoc)})); !strings.Contains(string(b), `"tokenKind":"open_api"`) {
			t.Errorf("an Open API token's manifest document: %s; want its data", b)
		}
		// An operation refused before it runs is an error message
		// (graphql-transport-ws), which carries the errors and no data.
		m := run(w.tokA, map[string]any{"query": freeDoc})
		if b, _ := json.Marshal(m); m["type"] != "error" || !strings.Contains(string(b), `"code":"PERSISTED_QUERY_ONLY"`) || strings.Contains(string(b), `"data"`) {
			t.Errorf("an Open API token's free-form document: %s; want an error message PERSISTED_QUERY_ONLY and no data", b)
		}
		if b, _ := json.Marshal(run(w.dashA, map[string]any{"query": freeDoc})); !strings.Contains(string(b), `"totalCount":23`) {
			t.Errorf("a dashboard token's free-form document: %s; want its data", b)
		}
	})
}
