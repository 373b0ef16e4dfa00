package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// getQuery sends q (with vars, when given) as a GraphQL GET with token,
// Accept and If-None-Match values ("" sends none).
func (w *world) getQuery(t *testing.T, token, accept, q string, vars map[string]any, inm ...string) *httptest.ResponseRecorder {
	t.Helper()
	v := url.Values{"query": {q}}
	if vars != nil {
		b, _ := json.Marshal(vars)
		v.Set("variables", string(b))
	}
	req := httptest.NewRequest(http.MethodGet, "/graphql?"+v.Encode(), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for _, tag := range inm {
		if tag != "" {
			req.Header.Add("If-None-Match", tag)
		}
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	return rec
}

// revalidatable checks a GraphQL GET answer that may be revalidated and
// returns its ETag.
func revalidatable(t *testing.T, what string, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
		t.Fatalf("%s = %d: %s; want 200 without errors", what, rec.Code, rec.Body)
	}
	return testkit.Revalidatable(t, what, rec.Header(), "Accept, Authorization")
}

// TestConditionalGETQueries: a query sent with GET that answers without
// errors carries a strong ETag, Cache-Control: private, no-cache and
// Vary: Accept, Authorization, and the same request with its ETag answers
// 304 with no body; another tag, another owner or another media type gets
// its own 200. An answer with errors, a request error, a mutation over GET
// and every POST stay no-store, whatever If-None-Match says; and a write
// changes the ETag of the record it changed.
func TestConditionalGETQueries(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		const page = `query { materialsPage(perPage: 5, orderBy: ID, order: ASC) { data { id name } pagination { total } } }`
		const one = `query M($id: ID!) { material(id: $id) { id name } }`
		var mats struct {
			MaterialsPage struct{ Data []struct{ ID string } }
		}
		w.ok(t, w.tokA, page, nil, &mats)
		id := mats.MaterialsPage.Data[0].ID
		vars := map[string]any{"id": id}

		first := w.getQuery(t, w.tokA, "", one, vars)
		tag := revalidatable(t, "GET material", first)
		for name, inm := range map[string][]string{"the tag": {tag}, "weak, in a list": {`"0000000000000000", W/` + tag}, "star": {"*"}} {
			rec := w.getQuery(t, w.tokA, "", one, vars, inm...)
			if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
				t.Errorf("GET material, If-None-Match %s = %d with %d bytes; want 304 and no body", name, rec.Code, rec.Body.Len())
			}
			for _, k := range []string{"ETag", "Cache-Control"} {
				if rec.Header().Get(k) != first.Header().Get(k) {
					t.Errorf("GET material, If-None-Match %s: 304 %s %q; want %q", name, k, rec.Header().Get(k), first.Header().Get(k))
				}
			}
			if got := strings.Join(rec.Header().Values("Vary"), ", "); got != "Accept, Authorization" {
				t.Errorf("GET material, If-None-Match %s: 304 Vary %q", name, got)
			}
		}
		if rec := w.getQuery(t, w.tokA, "", one, vars, `"0000000000000000"`); revalidatable(t, "GET material, another tag", rec) != tag ||
			rec.Body.String() != first.Body.String() {
			t.Errorf("GET material with another tag: %s; want the answer again, %s", rec.Body, first.Body)
		}
		// The media type follows Accept: another representation, another tag.
		if rec := w.getQuery(t, w.tokA, "application/graphql-response+json", one, vars, tag); revalidatable(t, "GET material as graphql-response+json", rec) == tag {
			t.Errorf("GET material: the same ETag %s for application/json and application/graphql-response+json", tag)
		}

		// Owner B, sending A's tags: its own answers, never a 304.
		pageA := w.getQuery(t, w.tokA, "", page, nil)
		tagA := revalidatable(t, "A GET materialsPage", pageA)
		pageB := w.getQuery(t, w.tokB, "", page, nil, tagA)
		if tagB := revalidatable(t, "B GET materialsPage with A's ETag", pageB); tagB == tagA || pageB.Body.String() == pageA.Body.String() {
			t.Errorf("B GET materialsPage with A's ETag: %s (%s); want B's own page", pageB.Body, tagB)
		}
		var own struct{ MaterialsPage json.RawMessage }
		w.ok(t, w.tokB, page, nil, &own)
		if !strings.Contains(pageB.Body.String(), string(own.MaterialsPage)) {
			t.Errorf("B GET materialsPage with A's ETag = %s; want B's page %s", pageB.Body, own.MaterialsPage)
		}
		// A's material read by B is an error (NOT_FOUND): no-store, no 304.
		for _, inm := range []string{tag, "*"} {
			rec := w.getQuery(t, w.tokB, "", one, vars, inm)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "NOT_FOUND") {
				t.Errorf("B GET A's material, If-None-Match %s = %d %s; want 200 with NOT_FOUND", inm, rec.Code, rec.Body)
			}
			testkit.NoStore(t, "B GET A's material", rec.Header())
		}
		for name, rec := range map[string]*httptest.ResponseRecorder{
			"no token":        w.getQuery(t, "", "", one, vars, tag),
			"a request error": w.getQuery(t, w.tokA, "", `query { material(id: 1) { colour } }`, nil, "*"),
			"a mutation":      w.getQuery(t, w.dashA, "", `mutation { deleteMaterial(id: `+id+`) }`, nil, "*"),
		} {
			if rec.Code == http.StatusOK && !strings.Contains(rec.Body.String(), `"errors"`) || rec.Code == http.StatusNotModified {
				t.Errorf("GET with %s = %d %s; want an error", name, rec.Code, rec.Body)
			}
			testkit.NoStore(t, "GET with "+name, rec.Header())
		}
		_, _, posted := post(t, w.h, w.tokA, "", `query { material(id: `+id+`) { id name } }`)
		testkit.NoStore(t, "POST query", posted)

		// A write changes the ETag of what it changed.
		status, r, h := post(t, w.h, w.dashA, "", `mutation { updateMaterial(id: `+id+`, input: {name: "Renamed"}) { name } }`)
		if status != http.StatusOK || len(r.Errors) > 0 {
			t.Fatalf("updateMaterial = %d %+v", status, r.Errors)
		}
		testkit.NoStore(t, "updateMaterial", h)
		rec := w.getQuery(t, w.tokA, "", one, vars, tag)
		if now := revalidatable(t, "GET material after updateMaterial with its old ETag", rec); now == tag || !strings.Contains(rec.Body.String(), "Renamed") {
			t.Errorf("GET material after updateMaterial = %s (%s); want the new name and a new ETag", rec.Body, now)
		}
		if rec := w.getQuery(t, w.tokA, "", page, nil, tagA); rec.Code != http.StatusOK {
			t.Errorf("GET materialsPage after updateMaterial with its old ETag = %d; want 200 (the page shows the name)", rec.Code)
		}
		if rec := w.getQuery(t, w.tokB, "", page, nil, pageB.Header().Get("ETag")); rec.Code != http.StatusNotModified {
			t.Errorf("B GET materialsPage after A's write = %d; want 304 (B's page is unchanged): %s", rec.Code, rec.Body)
		}
	})
}
