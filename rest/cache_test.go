package rest

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// conditional sends GET Prefix+path with token and the If-None-Match
// values given ("" sends no If-None-Match).
func (f *fixture) conditional(t *testing.T, token, path string, inm ...string) (int, http.Header, []byte) {
	t.Helper()
	req := f.request(t, http.MethodGet, path, token, nil)
	for _, v := range inm {
		if v != "" {
			req.Header.Add("If-None-Match", v)
		}
	}
	return f.do(t, req)
}

// checkRevalidatable checks a read's 200 and its caching headers, and
// returns its ETag.
func checkRevalidatable(t *testing.T, what string, status int, h http.Header, body []byte) string {
	t.Helper()
	if status != http.StatusOK {
		t.Fatalf("%s = %d; want 200: %s", what, status, body)
	}
	return testkit.Revalidatable(t, what, h, "Authorization")
}

// TestConditionalReads: every read answers 200 with a strong ETag,
// Cache-Control: private, no-cache and Vary: Authorization; the same
// request with that ETag (alone, weak, in a list, or *) answers 304 with
// no body and the same validator headers, and with another tag the whole
// answer again.
func TestConditionalReads(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		link := f.shareLink(t, f.owner1, map[string]any{"1": map[string]any{"id": 3}})
		paths := []string{
			"/orders?per_page=2", "/orders/1",
			"/materials?per_page=3", "/materials/1", "/materials-categories/list",
			"/textures", "/textures/1",
			"/configurator-forms", "/configurator-forms/1",
			"/configurator-form-fields?per_page=2", "/configurator-form-fields/1",
			"/configurator-options/types/list", "/configurator-options", "/configurator-option/1",
			"/configurator-option-variations?configurator_option_id=1", "/configurator-option-sets",
			"/shared/" + keyOf(link),
		}
		for _, path := range paths {
			t.Run(strings.Replace(path, keyOf(link), "{key}", 1), func(t *testing.T) {
				status, h, body := f.get(t, f.owner1, path)
				tag := checkRevalidatable(t, "GET "+path, status, h, body)
				for name, inm := range map[string][]string{
					"the tag": {tag}, "weak": {"W/" + tag}, "in a list": {`"0000000000000000", ` + tag},
					"in a second line": {`"0000000000000000"`, tag}, "star": {"*"},
				} {
					status, h304, body304 := f.conditional(t, f.owner1, path, inm...)
					if status != http.StatusNotModified || len(body304) != 0 {
						t.Errorf("GET %s, If-None-Match %s = %d with %d bytes; want 304 and no body", path, name, status, len(body304))
					}
					for _, k := range []string{"ETag", "Cache-Control", "Vary"} {
						if h304.Get(k) != h.Get(k) {
							t.Errorf("GET %s, If-None-Match %s: 304 %s %q; want %q as on the 200", path, name, k, h304.Get(k), h.Get(k))
						}
					}
				}
				for name, inm := range map[string]string{"another tag": `"0000000000000000"`, "malformed": "not-a-tag"} {
					status, h2, body2 := f.conditional(t, f.owner1, path, inm)
					if checkRevalidatable(t, "GET "+path+" with "+name, status, h2, body2) != tag || !bytes.Equal(body2, body) {
						t.Errorf("GET %s, If-None-Match %s: ETag %s, %s; want the 200 again: %s, %s", path, name, h2.Get("ETag"), body2, tag, body)
					}
				}
			})
		}
	})
}

// TestConditionalReadsAcrossCallers: an ETag is the hash of the answer
// computed for this caller, after authorization, so a tag never earns
// another caller a 304 for an answer that differs from its own: another
// owner sending it gets its own 200 (or the 404 it would get), a caller
// without a valid token its 401. Two tokens of the same owner read the
// same answer, and then the tag is theirs too.
func TestConditionalReadsAcrossCallers(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, path := range []string{"/materials?per_page=-1", "/orders?per_page=5", "/configurator-forms"} {
			status, h, mine := f.get(t, f.owner1, path)
			tag := checkRevalidatable(t, "owner 1 GET "+path, status, h, mine)
			_, _, theirs := f.get(t, f.owner2, path)
			status, h, body := f.conditional(t, f.owner2, path, tag)
			if status != http.StatusOK || !bytes.Equal(body, theirs) || bytes.Equal(body, mine) {
				t.Errorf("owner 2 GET %s with owner 1's ETag = %d: %.80s; want 200 with its own answer %.80s", path, status, body, theirs)
			}
			if other := checkRevalidatable(t, "owner 2 GET "+path, status, h, body); other == tag {
				t.Errorf("GET %s: owners 1 and 2 got the same ETag %s for different answers", path, tag)
			}
			// The owner's dashboard token reads the same list: the same tag.
			if status, _, _ := f.conditional(t, f.dash1, path, tag); status != http.StatusNotModified {
				t.Errorf("owner 1's dashboard token GET %s with the ETag of its Open API token = %d; want 304 (the same answer)", path, status)
			}
		}

		path := "/materials/1"
		status, h, body := f.get(t, f.owner1, path)
		tag := checkRevalidatable(t, "owner 1 GET "+path, status, h, body)
		for _, tc := range []struct {
			who, token string
			want       int
		}{
			{"owner 2", f.owner2, http.StatusNotFound},
			{"no token", "", http.StatusUnauthorized},
			{"a revoked token", f.revoked, http.StatusUnauthorized},
			{"a forged token", f.foreign, http.StatusUnauthorized},
		} {
			for _, inm := range []string{tag, "*"} {
				status, h, body := f.conditional(t, tc.token, path, inm)
				problemOf(t, tc.who+" GET "+path+" If-None-Match "+inm, status, h, body, tc.want)
				testkit.NoStore(t, tc.who+" GET "+path, h)
			}
		}
	})
}

// TestWritesChangeETags: a write changes the ETag of what it changed (the
// record and the lists that show it), through REST and through GraphQL,
// so the old tag gets the new answer; a list whose page is unchanged but
// whose total grew gets a new tag too (X-Total-Count is part of it).
// Writes and errors stay no-store.
func TestWritesChangeETags(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		const path, list, first = "/materials/1", "/materials?per_page=-1", "/materials?per_page=1&order_by=id&order=asc"
		tags := map[string]string{}
		bodies := map[string][]byte{}
		// read checks that the paths changed answer 200 with a new ETag to
		// the ETag read before, and the others 304.
		read := func(what string, changed ...string) {
			t.Helper()
			for _, p := range []string{path, list, first} {
				status, h, body := f.conditional(t, f.dash1, p, tags[p])
				if !slices.Contains(changed, p) {
					if status != http.StatusNotModified {
						t.Errorf("%s: GET %s with the ETag read before = %d; want 304 (unchanged)", what, p, status)
					}
					continue
				}
				tag := checkRevalidatable(t, what+": GET "+p+" with the ETag read before", status, h, body)
				if tag == tags[p] {
					t.Errorf("%s: GET %s = ETag %s again; want a new one", what, p, tag)
				}
				tags[p], bodies[p] = tag, body
			}
		}
		read("first read", path, list, first)

		status, h, body := f.sendJSON(t, http.MethodPut, path, f.dash1, `{"name":"Renamed by REST"}`)
		jsonObject(t, "PUT "+path, status, h, body, http.StatusOK)
		testkit.NoStore(t, "PUT "+path, h)
		read("after PUT", path, list, first)
		if !bytes.Contains(bodies[path], []byte("Renamed by REST")) {
			t.Errorf("GET %s after PUT: %s", path, bodies[path])
		}

		var upd struct{ UpdateMaterial struct{ Name string } }
		f.graphql(t, f.dash1, `mutation { updateMaterial(id: 1, input: {name: "Renamed by GraphQL"}) { name } }`, nil, &upd)
		read("after updateMaterial", path, list, first)
		if !bytes.Contains(bodies[path], []byte("Renamed by GraphQL")) {
			t.Errorf("GET %s after updateMaterial: %s", path, bodies[path])
		}

		// A new material is last by id: page 1 of one material keeps its
		// body, its X-Total-Count (and so its ETag) changes.
		status, h, body = f.sendJSON(t, http.MethodPost, "/materials", f.dash1, `{"name":"Teak","color":"#8B5A2B","category_id":1,"opacity":1}`)
		jsonObject(t, "POST /materials", status, h, body, http.StatusCreated)
		testkit.NoStore(t, "POST /materials", h)
		before := bodies[first]
		read("after POST", list, first)
		if !bytes.Equal(bodies[first], before) {
			t.Errorf("GET %s after POST: page 1 changed: %s, was %s", first, bodies[first], before)
		}

		status, h, _ = f.sendJSON(t, http.MethodDelete, "/materials/1", f.dash1, "")
		if status != http.StatusOK {
			t.Fatalf("DELETE /materials/1 = %d", status)
		}
		testkit.NoStore(t, "DELETE /materials/1", h)
		status, h, body = f.conditional(t, f.dash1, path, tags[path])
		problemOf(t, "GET "+path+" after DELETE with its old ETag", status, h, body, http.StatusNotFound)
		testkit.NoStore(t, "GET "+path+" after DELETE", h)

		status, h, body = f.conditional(t, f.owner1, "/materials?page=0", "*")
		problemOf(t, "GET /materials?page=0", status, h, body, http.StatusBadRequest)
		testkit.NoStore(t, "GET /materials?page=0", h)
		status, h, _ = f.conditional(t, f.owner1, fmt.Sprintf("/configurator-option-variations?configurator_option_id=%d", 999999), "*")
		if status != http.StatusNotFound {
			t.Errorf("GET variations of an unknown option = %d; want 404", status)
		}
		testkit.NoStore(t, "GET variations of an unknown option", h)
	})
}
