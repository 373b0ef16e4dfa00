package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/valid"
)

// fullMaterial is a POST /materials body that sets every field; category
// 1 and texture 1 are owner 1's in the demo data.
const fullMaterial = `{"name":"Brushed Brass","material_file":"https://cdn.example.com/materials/brass.glb",` +
	`"category_id":1,"texture_id":1,"status":false,"material_type":"glossy","surface":"metal","bump":true,` +
	`"color":"#B5A642","opacity":0.8,"specular":0.6,"reflection":0.4,"created_by":"studio@nordhaus.example"}`

// codeOf is the problem code of each refusal status.
var codeOf = map[int]string{
	http.StatusBadRequest:            "BAD_REQUEST",
	http.StatusUnauthorized:          "UNAUTHENTICATED",
	http.StatusForbidden:             "FORBIDDEN",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusRequestEntityTooLarge: "PAYLOAD_TOO_LARGE",
	http.StatusUnsupportedMediaType:  "UNSUPPORTED_MEDIA_TYPE",
}

// jsonObject decodes a JSON object answer, failing unless it has status
// and is application/json.
func jsonObject(t *testing.T, what string, status int, h http.Header, body []byte, want int) map[string]any {
	t.Helper()
	if status != want {
		t.Fatalf("%s = %d; want %d: %s", what, status, want, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type = %q; want application/json", what, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: decode %s: %v", what, body, err)
	}
	return m
}

// idOf is the id of a decoded record.
func idOf(m map[string]any) int {
	n, _ := m["id"].(float64)
	return int(n)
}

// checkChanged compares a record after a write with the record before:
// the fields of want have its values, updated_at may move forward, and
// every other field is unchanged.
func checkChanged(t *testing.T, what string, before, after, want map[string]any) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%s: fields %v; want %v", what, sortedKeys(after), sortedKeys(before))
	}
	for k := range want {
		if _, ok := after[k]; !ok {
			t.Errorf("%s: no field %s; want %v", what, k, want[k])
		}
	}
	for k, v := range after {
		switch w, ok := want[k]; {
		case ok:
			if !reflect.DeepEqual(v, w) {
				t.Errorf("%s: %s = %v; want %v", what, k, v, w)
			}
		case k == "updated_at":
			if v.(string) < before[k].(string) {
				t.Errorf("%s: updated_at = %v; want at least %v", what, v, before[k])
			}
		default:
			if !reflect.DeepEqual(v, before[k]) {
				t.Errorf("%s: %s = %v; want it unchanged, %v", what, k, v, before[k])
			}
		}
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// read gets path with owner 1's token and decodes the record.
func (f *fixture) read(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	f.ok(t, f.owner1, path, &m)
	return m
}

// checkAbsent checks that path answers 404 to token.
func (f *fixture) checkAbsent(t *testing.T, token, path string) {
	t.Helper()
	status, h, body := f.get(t, token, path)
	checkProblem(t, "GET "+path, status, h, body, http.StatusNotFound, "NOT_FOUND")
}

// checkDeleted checks a deletion's confirmation.
func checkDeleted(t *testing.T, what string, status int, h http.Header, body []byte, kind string, id int) {
	t.Helper()
	m := jsonObject(t, what, status, h, body, http.StatusOK)
	want := map[string]any{"status": "success", "message": fmt.Sprintf("%s %d deleted", kind, id), "id": float64(id)}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("%s = %s; want %v", what, body, want)
	}
}

// writeRefusal is a write that must be refused with status, naming fields
// (when given), and change nothing.
type writeRefusal struct {
	name   string
	token  string // "" for dash1, or "owner1", "owner2"
	method string // PUT when empty for updates, POST for creates
	path   string // the endpoint's path when empty
	ctype  string // application/json when empty; "-" for none
	body   string
	parts  []formPart // a multipart body instead of body
	status int
	fields []string
}

// run sends the refusal and checks the problem.
func (tc writeRefusal) run(t *testing.T, f *fixture, method, path string) {
	t.Helper()
	token := map[string]string{"": f.dash1, "owner1": f.owner1, "owner2": f.owner2}[tc.token]
	if tc.method != "" {
		method = tc.method
	}
	if tc.path != "" {
		path = tc.path
	}
	var status int
	var h http.Header
	var body []byte
	switch {
	case tc.parts != nil:
		status, h, body = f.sendForm(t, method, path, token, tc.parts...)
	case tc.ctype == "-":
		status, h, body = f.send(t, method, path, token, "", []byte(tc.body))
	case tc.ctype != "":
		status, h, body = f.send(t, method, path, token, tc.ctype, []byte(tc.body))
	default:
		status, h, body = f.sendJSON(t, method, path, token, tc.body)
	}
	checkProblem(t, method+" "+path, status, h, body, tc.status, codeOf[tc.status], tc.fields...)
}

func TestCreateMaterial(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		catID, texID, _ := otherCatalogue(t, c)

		status, h, body := f.sendJSON(t, http.MethodPost, "/materials", f.dash1, fullMaterial)
		m := jsonObject(t, "POST /materials", status, h, body, http.StatusCreated)
		path := fmt.Sprintf("/materials/%d", idOf(m))
		if want := testPublicURL + Prefix + path; h.Get("Location") != want {
			t.Errorf("POST /materials: Location = %q; want %q", h.Get("Location"), want)
		}
		golden(t, "material_created", maskBody(t, body))
		if _, _, got := f.get(t, f.owner1, path); !bytes.Equal(got, body) {
			t.Errorf("GET %s = %s; want the body POST answered: %s", path, got, body)
		}

		// Fields left out take their defaults.
		status, h, body = f.sendJSON(t, http.MethodPost, "/materials", f.dash1, `{"name":"Plain"}`)
		m = jsonObject(t, `POST /materials {"name":"Plain"}`, status, h, body, http.StatusCreated)
		for k, want := range map[string]any{
			"name": "Plain", "material_file": nil, "category_id": nil, "texture_id": nil, "status": true,
			"material_type": "", "surface": "", "bump": false, "color": "#FFFFFF", "opacity": 1.0,
			"specular": 0.0, "reflection": 0.0, "created_by": "",
		} {
			if !reflect.DeepEqual(m[k], want) {
				t.Errorf(`POST /materials {"name":"Plain"}: %s = %#v; want %#v`, k, m[k], want)
			}
		}

		big := `{"name":"` + strings.Repeat("x", valid.MaxJSONBody) + `"}`
		for _, tc := range []writeRefusal{
			{name: "unknown field", body: `{"name":"x","shine":1}`, status: 400, fields: []string{"shine"}},
			{name: "id in the body", body: `{"id":5,"name":"x"}`, status: 400, fields: []string{"id"}},
			{name: "opacity a string", body: `{"name":"x","opacity":"high"}`, status: 400, fields: []string{"opacity"}},
			{name: "status a string", body: `{"name":"x","status":"yes"}`, status: 400, fields: []string{"status"}},
			{name: "category_id a string", body: `{"name":"x","category_id":"1"}`, status: 400, fields: []string{"category_id"}},
			{name: "category_id a fraction", body: `{"name":"x","category_id":1.5}`, status: 400, fields: []string{"category_id"}},
			{name: "name a number", body: `{"name":5}`, status: 400, fields: []string{"name"}},
			{name: "missing name", body: `{"color":"#000000"}`, status: 400, fields: []string{"name"}},
			{name: "empty object", body: `{}`, status: 400, fields: []string{"name"}},
			{name: "name null", body: `{"name":null}`, status: 400, fields: []string{"name"}},
			{name: "name empty", body: `{"name":""}`, status: 400, fields: []string{"name"}},
			{name: "name too long", body: `{"name":"` + strings.Repeat("n", 256) + `"}`, status: 400, fields: []string{"name"}},
			{name: "color red", body: `{"name":"x","color":"red"}`, status: 400, fields: []string{"color"}},
			{name: "color short", body: `{"name":"x","color":"#FFF"}`, status: 400, fields: []string{"color"}},
			{name: "color not hex", body: `{"name":"x","color":"#GGGGGG"}`, status: 400, fields: []string{"color"}},
			{name: "opacity 2", body: `{"name":"x","opacity":2}`, status: 400, fields: []string{"opacity"}},
			{name: "opacity negative", body: `{"name":"x","opacity":-0.5}`, status: 400, fields: []string{"opacity"}},
			{name: "specular negative", body: `{"name":"x","specular":-1}`, status: 400, fields: []string{"specular"}},
			{name: "material_file not a URL", body: `{"name":"x","material_file":"brass.glb"}`, status: 400, fields: []string{"material_file"}},
			{name: "category_id 0", body: `{"name":"x","category_id":0}`, status: 400, fields: []string{"category_id"}},
			{name: "texture_id negative", body: `{"name":"x","texture_id":-2}`, status: 400, fields: []string{"texture_id"}},
			{name: "category of the other owner", body: fmt.Sprintf(`{"name":"x","category_id":%d}`, catID), status: 404},
			{name: "texture of the other owner", body: fmt.Sprintf(`{"name":"x","texture_id":%d}`, texID), status: 404},
			{name: "category 9999", body: `{"name":"x","category_id":9999}`, status: 404},
			{name: "open api token", token: "owner1", body: `{"name":"x"}`, status: 403},
			{name: "open api token of the other owner", token: "owner2", body: `{"name":"x"}`, status: 403},
			{name: "form body", ctype: "application/x-www-form-urlencoded", body: "name=x", status: 415},
			{name: "multipart body", parts: []formPart{textPart("name", "x")}, status: 415},
			{name: "no content type", ctype: "-", body: `{"name":"x"}`, status: 415},
			{name: "json with charset", ctype: "application/json; charset=utf-8", body: `{"name":`, status: 400},
			{name: "body over 1 MiB", body: big, status: 413},
			{name: "malformed", body: `{"name":`, status: 400},
			{name: "not an object", body: `["x"]`, status: 400},
			{name: "null", body: `null`, status: 400},
			{name: "empty", body: ``, status: 400},
			{name: "two objects", body: `{"name":"a"} {"name":"b"}`, status: 400},
			{name: "trailing brace", body: `{"name":"a"}}`, status: 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := rowCount(t, c, "materials")
				tc.run(t, f, http.MethodPost, "/materials")
				if n := rowCount(t, c, "materials"); n != before {
					t.Errorf("after a refusal there are %d materials; want %d", n, before)
				}
			})
		}

		// A body over the limit that does not declare its length is cut
		// off at the limit.
		t.Run("streamed body over 1 MiB", func(t *testing.T) {
			req := f.request(t, http.MethodPost, "/materials", f.dash1, struct{ *strings.Reader }{strings.NewReader(big)})
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = -1
			status, h, body := f.do(t, req)
			checkProblem(t, "POST /materials streamed", status, h, body, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		})
	})
}

func TestUpdateMaterial(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		catID, texID, theirMaterial := otherCatalogue(t, c)
		status, h, body := f.sendJSON(t, http.MethodPost, "/materials", f.dash1, fullMaterial)
		path := fmt.Sprintf("/materials/%d", idOf(jsonObject(t, "POST /materials", status, h, body, http.StatusCreated)))

		for _, tc := range []struct {
			name, body string
			want       map[string]any
		}{
			{"name only", `{"name":"Polished Brass"}`, map[string]any{"name": "Polished Brass"}},
			{"several", `{"opacity":0.25,"status":true,"color":"#000000","bump":false}`,
				map[string]any{"opacity": 0.25, "status": true, "color": "#000000", "bump": false}},
			{"nothing", `{}`, nil},
			{"same value", `{"surface":"metal"}`, nil},
			{"null clears material_file", `{"material_file":null}`, map[string]any{"material_file": nil}},
			{"null clears category and texture", `{"category_id":null,"texture_id":null}`, map[string]any{"category_id": nil, "texture_id": nil}},
			{"set category and texture", `{"category_id":2,"texture_id":2}`, map[string]any{"category_id": 2.0, "texture_id": 2.0}},
			{"material_file as a path", `{"material_file":"/files/brass.glb"}`, map[string]any{"material_file": "/files/brass.glb"}},
			{"zero values", `{"specular":0,"reflection":0,"material_type":"","created_by":""}`,
				map[string]any{"specular": 0.0, "reflection": 0.0, "material_type": "", "created_by": ""}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := f.read(t, path)
				status, h, body := f.sendJSON(t, http.MethodPut, path, f.dash1, tc.body)
				after := jsonObject(t, "PUT "+path+" "+tc.body, status, h, body, http.StatusOK)
				checkChanged(t, "PUT "+path+" "+tc.body, before, after, tc.want)
				if !reflect.DeepEqual(f.read(t, path), after) {
					t.Errorf("GET %s after PUT: not what PUT answered: %s", path, body)
				}
			})
		}

		other := fmt.Sprintf("/materials/%d", theirMaterial)
		for _, tc := range []writeRefusal{
			{name: "name null", body: `{"name":null}`, status: 400, fields: []string{"name"}},
			{name: "name empty", body: `{"name":""}`, status: 400, fields: []string{"name"}},
			{name: "color null", body: `{"color":null}`, status: 400, fields: []string{"color"}},
			{name: "several null", body: `{"opacity":null,"status":null}`, status: 400, fields: []string{"status", "opacity"}},
			{name: "color red", body: `{"color":"red"}`, status: 400, fields: []string{"color"}},
			{name: "opacity 2", body: `{"opacity":2}`, status: 400, fields: []string{"opacity"}},
			{name: "opacity a string", body: `{"opacity":"high"}`, status: 400, fields: []string{"opacity"}},
			{name: "unknown field", body: `{"shine":1}`, status: 400, fields: []string{"shine"}},
			{name: "created_at", body: `{"created_at":"2020-01-01T00:00:00Z"}`, status: 400, fields: []string{"created_at"}},
			{name: "category_id 0", body: `{"category_id":0}`, status: 400, fields: []string{"category_id"}},
			{name: "category of the other owner", body: fmt.Sprintf(`{"category_id":%d}`, catID), status: 404},
			{name: "texture of the other owner", body: fmt.Sprintf(`{"texture_id":%d}`, texID), status: 404},
			{name: "material of the other owner", path: other, body: `{"name":"hijack"}`, status: 404},
			{name: "unknown material", path: "/materials/999999", body: `{"name":"x"}`, status: 404},
			{name: "id not a number", path: "/materials/x", body: `{"name":"x"}`, status: 400, fields: []string{"id"}},
			{name: "id 0", path: "/materials/0", body: `{"name":"x"}`, status: 400, fields: []string{"id"}},
			{name: "open api token", token: "owner1", body: `{"name":"x"}`, status: 403},
			{name: "form body", ctype: "application/x-www-form-urlencoded", body: "name=x", status: 415},
			{name: "no content type", ctype: "-", body: `{"name":"x"}`, status: 415},
			{name: "malformed", body: `{"name"`, status: 400},
			{name: "null", body: `null`, status: 400},
			{name: "body over 1 MiB", body: `{"name":"` + strings.Repeat("x", valid.MaxJSONBody) + `"}`, status: 413},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, before := f.get(t, f.owner1, path)
				_, _, theirs := f.get(t, f.owner2, other)
				tc.run(t, f, http.MethodPut, path)
				if _, _, after := f.get(t, f.owner1, path); !bytes.Equal(after, before) {
					t.Errorf("GET %s after a refusal = %s; want it unchanged, %s", path, after, before)
				}
				if _, _, after := f.get(t, f.owner2, other); !bytes.Equal(after, theirs) {
					t.Errorf("owner 2 GET %s after a refusal = %s; want it unchanged, %s", other, after, theirs)
				}
			})
		}
	})
}

func TestDeleteMaterial(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		_, _, theirMaterial := otherCatalogue(t, c)
		status, h, body := f.sendJSON(t, http.MethodPost, "/materials", f.dash1, fullMaterial)
		id := idOf(jsonObject(t, "POST /materials", status, h, body, http.StatusCreated))
		path := fmt.Sprintf("/materials/%d", id)

		// Refusals first: they leave the material in place.
		other := fmt.Sprintf("/materials/%d", theirMaterial)
		for _, tc := range []writeRefusal{
			{name: "open api token", token: "owner1", status: 403},
			{name: "material of the other owner", path: other, status: 404},
			{name: "unknown material", path: "/materials/999999", status: 404},
			{name: "id not a number", path: "/materials/x", status: 400, fields: []string{"id"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.run(t, f, http.MethodDelete, path)
				f.read(t, path)
				if status, _, body := f.get(t, f.owner2, other); status != http.StatusOK {
					t.Errorf("owner 2 GET %s = %d; want 200, its material kept: %s", other, status, body)
				}
			})
		}

		status, h, body = f.do(t, f.request(t, http.MethodDelete, path, f.dash1, nil))
		checkDeleted(t, "DELETE "+path, status, h, body, "material", id)
		f.checkAbsent(t, f.owner1, path)
		if ids := f.ids(t, f.owner1, "/materials?per_page=-1"); slices.Contains(ids, id) {
			t.Errorf("GET /materials = %v; want it without the deleted %d", ids, id)
		}
		status, h, body = f.do(t, f.request(t, http.MethodDelete, path, f.dash1, nil))
		checkProblem(t, "DELETE "+path+" again", status, h, body, http.StatusNotFound, "NOT_FOUND")

		// A demo material that option variations name deletes too.
		status, h, body = f.do(t, f.request(t, http.MethodDelete, "/materials/1", f.dash1, nil))
		checkDeleted(t, "DELETE /materials/1", status, h, body, "material", 1)
	})
}

// createTexture posts a texture and returns it.
func (f *fixture) createTexture(t *testing.T, parts ...formPart) map[string]any {
	t.Helper()
	status, h, body := f.sendForm(t, http.MethodPost, "/textures", f.dash1, parts...)
	m := jsonObject(t, "POST /textures", status, h, body, http.StatusCreated)
	tex, _ := m["texture"].(map[string]any)
	if m["status"] != "success" || tex == nil || m["id"] != tex["id"] || len(m) != 3 {
		t.Fatalf("POST /textures = %s; want {status: success, id, texture} with the texture's id", body)
	}
	if want := fmt.Sprintf("%s%s/textures/%d", testPublicURL, Prefix, idOf(tex)); h.Get("Location") != want {
		t.Errorf("POST /textures: Location = %q; want %q", h.Get("Location"), want)
	}
	return tex
}

// checkThumbnail checks that url serves a w×h PNG.
func (f *fixture) checkThumbnail(t *testing.T, url string, w, h int) {
	t.Helper()
	status, hdr, body := f.fetch(t, url)
	if status != http.StatusOK || hdr.Get("Content-Type") != "image/png" || hdr.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET %s = %d, %s, nosniff %q; want 200, image/png, nosniff", url, status, hdr.Get("Content-Type"), hdr.Get("X-Content-Type-Options"))
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(body))
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Errorf("GET %s: %d×%d (%v); want a %d×%d PNG", url, cfg.Width, cfg.Height, err, w, h)
	}
}

// textureURLs are the stored files of a texture.
func textureURLs(tex map[string]any) []string {
	var out []string
	for _, k := range []string{"texture_file", "texture_thumbnail_50", "texture_thumbnail_100", "bump_file"} {
		if s, ok := tex[k].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestCreateTexture(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		catID, _, _ := otherCatalogue(t, c)
		wide := testkit.PNG(200, 100, 1)

		status, h, body := f.sendForm(t, http.MethodPost, "/textures", f.dash1, textPart("name", "Oak Veneer"), filePart("file", wide))
		golden(t, "texture_created", maskBody(t, body))
		m := jsonObject(t, "POST /textures", status, h, body, http.StatusCreated)
		tex := m["texture"].(map[string]any)
		f.checkServed(t, tex["texture_file"].(string), wide, "image/png")
		f.checkThumbnail(t, tex["texture_thumbnail_50"].(string), 50, 25)
		f.checkThumbnail(t, tex["texture_thumbnail_100"].(string), 100, 50)
		if tex["name"] != "Oak Veneer" || tex["bump_file"] != nil || tex["category_id"] != nil {
			t.Errorf("POST /textures: texture %v; want name Oak Veneer, bump_file and category_id null", tex)
		}
		if n := f.store.Len(); n != 3 {
			t.Errorf("store holds %d files; want 3 (the image and two thumbnails)", n)
		}
		path := fmt.Sprintf("/textures/%d", idOf(tex))
		if got := f.read(t, path); !reflect.DeepEqual(got, tex) {
			t.Errorf("GET %s = %v; want the texture POST answered, %v", path, got, tex)
		}

		// A JPEG, taller than wide, with a category and a bump map.
		tall, bump := testkit.JPEG(100, 200, 2), testkit.JPEG(32, 32, 3)
		tex = f.createTexture(t, textPart("name", "Slate"), filePart("file", tall), textPart("category_id", "1"), filePart("bump_file", bump))
		f.checkServed(t, tex["texture_file"].(string), tall, "image/jpeg")
		f.checkServed(t, tex["bump_file"].(string), bump, "image/jpeg")
		f.checkThumbnail(t, tex["texture_thumbnail_50"].(string), 25, 50)
		f.checkThumbnail(t, tex["texture_thumbnail_100"].(string), 50, 100)
		if tex["category_id"] != 1.0 {
			t.Errorf("POST /textures with category_id 1: category_id = %v; want 1", tex["category_id"])
		}
		if n := f.store.Len(); n != 7 {
			t.Errorf("store holds %d files; want 7", n)
		}

		for _, tc := range []writeRefusal{
			{name: "missing name", parts: []formPart{filePart("file", wide)}, status: 400, fields: []string{"name"}},
			{name: "empty name", parts: []formPart{textPart("name", ""), filePart("file", wide)}, status: 400, fields: []string{"name"}},
			{name: "blank name", parts: []formPart{textPart("name", "  "), filePart("file", wide)}, status: 400, fields: []string{"name"}},
			{name: "name twice", parts: []formPart{textPart("name", "a"), textPart("name", "b"), filePart("file", wide)}, status: 400, fields: []string{"name"}},
			{name: "name as a file", parts: []formPart{filePart("name", []byte("Oak")), filePart("file", wide)}, status: 400, fields: []string{"name"}},
			{name: "missing file", parts: []formPart{textPart("name", "x")}, status: 400, fields: []string{"file"}},
			{name: "missing both", parts: []formPart{textPart("other", "x")}, status: 400, fields: []string{"name", "file"}},
			{name: "file as text", parts: []formPart{textPart("name", "x"), textPart("file", "oak.png")}, status: 400, fields: []string{"file"}},
			{name: "two files", parts: []formPart{textPart("name", "x"), filePart("file", wide), filePart("file", wide)}, status: 400, fields: []string{"file"}},
			{name: "file not an image", parts: []formPart{textPart("name", "x"), filePart("file", []byte("%PDF-1.7\n"))}, status: 400, fields: []string{"file"}},
			{name: "file a GIF", parts: []formPart{textPart("name", "x"), filePart("file", testkit.GIF(8, 8))}, status: 400, fields: []string{"file"}},
			{name: "file over the limit", parts: []formPart{textPart("name", "x"), filePart("file", testkit.NoisePNG(testMaxFileBytes))}, status: 413, fields: []string{"file"}},
			{name: "bump_file not an image", parts: []formPart{textPart("name", "x"), filePart("file", wide), filePart("bump_file", []byte("bump"))}, status: 400, fields: []string{"bump_file"}},
			{name: "bump_file as text", parts: []formPart{textPart("name", "x"), filePart("file", wide), textPart("bump_file", "b.png")}, status: 400, fields: []string{"bump_file"}},
			{name: "category_id x", parts: []formPart{textPart("name", "x"), filePart("file", wide), textPart("category_id", "x")}, status: 400, fields: []string{"category_id"}},
			{name: "category_id 0", parts: []formPart{textPart("name", "x"), filePart("file", wide), textPart("category_id", "0")}, status: 400, fields: []string{"category_id"}},
			{name: "category of the other owner", parts: []formPart{textPart("name", "x"), filePart("file", wide), textPart("category_id", fmt.Sprint(catID)), filePart("bump_file", bump)}, status: 404},
			{name: "category 9999", parts: []formPart{textPart("name", "x"), filePart("file", wide), textPart("category_id", "9999")}, status: 404},
			{name: "open api token", token: "owner1", parts: []formPart{textPart("name", "x"), filePart("file", wide)}, status: 403},
			{name: "json body", body: `{"name":"x"}`, status: 415},
			{name: "no content type", ctype: "-", body: "name=x", status: 415},
		} {
			t.Run(tc.name, func(t *testing.T) {
				textures, files := rowCount(t, c, "textures"), f.store.Len()
				tc.run(t, f, http.MethodPost, "/textures")
				if n := rowCount(t, c, "textures"); n != textures {
					t.Errorf("after a refusal there are %d textures; want %d", n, textures)
				}
				if n := f.store.Len(); n != files {
					t.Errorf("after a refusal the store holds %d files; want %d", n, files)
				}
			})
		}
	})
}

func TestUpdateTexture(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		catID, theirTexture, _ := otherCatalogue(t, c)
		tex := f.createTexture(t, textPart("name", "Oak Veneer"), filePart("file", testkit.PNG(200, 100, 1)), textPart("category_id", "1"))
		path := fmt.Sprintf("/textures/%d", idOf(tex))

		// A new image replaces the old one and its thumbnails.
		tall := testkit.JPEG(64, 128, 2)
		status, h, body := f.sendForm(t, http.MethodPut, path, f.dash1, filePart("file", tall))
		after := jsonObject(t, "PUT "+path+" with a file", status, h, body, http.StatusOK)
		for _, k := range []string{"texture_file", "texture_thumbnail_50", "texture_thumbnail_100"} {
			if after[k] == tex[k] || after[k] == nil {
				t.Errorf("PUT %s with a file: %s = %v; want a new URL", path, k, after[k])
			}
			f.checkGone(t, tex[k].(string))
		}
		checkChanged(t, "PUT "+path+" with a file", tex, after, map[string]any{
			"texture_file": after["texture_file"], "texture_thumbnail_50": after["texture_thumbnail_50"], "texture_thumbnail_100": after["texture_thumbnail_100"],
		})
		f.checkServed(t, after["texture_file"].(string), tall, "image/jpeg")
		f.checkThumbnail(t, after["texture_thumbnail_50"].(string), 25, 50)
		f.checkThumbnail(t, after["texture_thumbnail_100"].(string), 50, 100)
		if n := f.store.Len(); n != 3 {
			t.Errorf("store holds %d files after the replacement; want 3", n)
		}

		// A bump map is added, then replaced.
		for i := range 2 {
			before := f.read(t, path)
			bump := testkit.PNG(16, 16, uint8(i))
			status, h, body := f.sendForm(t, http.MethodPut, path, f.dash1, filePart("bump_file", bump))
			after := jsonObject(t, "PUT "+path+" with a bump_file", status, h, body, http.StatusOK)
			checkChanged(t, "PUT "+path+" with a bump_file", before, after, map[string]any{"bump_file": after["bump_file"]})
			f.checkServed(t, after["bump_file"].(string), bump, "image/png")
			if old, ok := before["bump_file"].(string); ok {
				f.checkGone(t, old)
			}
			if n := f.store.Len(); n != 4 {
				t.Errorf("store holds %d files with a bump map; want 4", n)
			}
		}

		for _, tc := range []struct {
			name  string
			body  string
			parts []formPart
			want  map[string]any
		}{
			{name: "json rename", body: `{"name":"x"}`, want: map[string]any{"name": "x"}},
			{name: "json clears the category", body: `{"category_id":null}`, want: map[string]any{"category_id": nil}},
			{name: "json sets the category", body: `{"category_id":2}`, want: map[string]any{"category_id": 2.0}},
			{name: "json nothing", body: `{}`},
			{name: "json name and category", body: `{"name":"Walnut","category_id":1}`, want: map[string]any{"name": "Walnut", "category_id": 1.0}},
			{name: "multipart rename", parts: []formPart{textPart("name", "Oak")}, want: map[string]any{"name": "Oak"}},
			{name: "multipart category", parts: []formPart{textPart("category_id", "2")}, want: map[string]any{"category_id": 2.0}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, files := f.read(t, path), f.store.Len()
				var status int
				var h http.Header
				var body []byte
				if tc.parts != nil {
					status, h, body = f.sendForm(t, http.MethodPut, path, f.dash1, tc.parts...)
				} else {
					status, h, body = f.sendJSON(t, http.MethodPut, path, f.dash1, tc.body)
				}
				after := jsonObject(t, "PUT "+path+" "+tc.name, status, h, body, http.StatusOK)
				checkChanged(t, "PUT "+path+" "+tc.name, before, after, tc.want)
				if n := f.store.Len(); n != files {
					t.Errorf("store holds %d files; want %d", n, files)
				}
			})
		}

		other := fmt.Sprintf("/textures/%d", theirTexture)
		png1 := testkit.PNG(20, 20, 9)
		for _, tc := range []writeRefusal{
			{name: "json name null", body: `{"name":null}`, status: 400, fields: []string{"name"}},
			{name: "json name empty", body: `{"name":""}`, status: 400, fields: []string{"name"}},
			{name: "json texture_file", body: `{"texture_file":"http://example.com/a.png"}`, status: 400, fields: []string{"texture_file"}},
			{name: "json category_id a string", body: `{"category_id":"1"}`, status: 400, fields: []string{"category_id"}},
			{name: "json category_id 0", body: `{"category_id":0}`, status: 400, fields: []string{"category_id"}},
			{name: "json category of the other owner", body: fmt.Sprintf(`{"category_id":%d}`, catID), status: 404},
			{name: "json malformed", body: `{"name":`, status: 400},
			{name: "json texture of the other owner", path: other, body: `{"name":"hijack"}`, status: 404},
			{name: "json unknown texture", path: "/textures/999999", body: `{"name":"x"}`, status: 404},
			{name: "json open api token", token: "owner1", body: `{"name":"x"}`, status: 403},
			{name: "multipart file not an image", parts: []formPart{filePart("file", []byte("not an image"))}, status: 400, fields: []string{"file"}},
			{name: "multipart file over the limit", parts: []formPart{filePart("file", testkit.NoisePNG(testMaxFileBytes))}, status: 413, fields: []string{"file"}},
			{name: "multipart file as text", parts: []formPart{textPart("file", "a.png")}, status: 400, fields: []string{"file"}},
			{name: "multipart empty name", parts: []formPart{textPart("name", ""), filePart("file", png1)}, status: 400, fields: []string{"name"}},
			{name: "multipart category_id x", parts: []formPart{textPart("category_id", "x"), filePart("file", png1)}, status: 400, fields: []string{"category_id"}},
			{name: "multipart category of the other owner", parts: []formPart{textPart("category_id", fmt.Sprint(catID)), filePart("file", png1), filePart("bump_file", png1)}, status: 404},
			{name: "multipart texture of the other owner", path: other, parts: []formPart{filePart("file", png1)}, status: 404},
			{name: "multipart open api token", token: "owner1", parts: []formPart{filePart("file", png1)}, status: 403},
			{name: "text body", ctype: "text/plain", body: "name=x", status: 415},
			{name: "no content type", ctype: "-", body: `{"name":"x"}`, status: 415},
			{name: "id not a number", path: "/textures/x", body: `{"name":"x"}`, status: 400, fields: []string{"id"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, _, before := f.get(t, f.owner1, path)
				_, _, theirs := f.get(t, f.owner2, other)
				files := f.store.Len()
				tc.run(t, f, http.MethodPut, path)
				if _, _, after := f.get(t, f.owner1, path); !bytes.Equal(after, before) {
					t.Errorf("GET %s after a refusal = %s; want it unchanged, %s", path, after, before)
				}
				if _, _, after := f.get(t, f.owner2, other); !bytes.Equal(after, theirs) {
					t.Errorf("owner 2 GET %s after a refusal = %s; want it unchanged, %s", other, after, theirs)
				}
				if n := f.store.Len(); n != files {
					t.Errorf("after a refusal the store holds %d files; want %d", n, files)
				}
			})
		}
		// The 415 names both media types the endpoint takes.
		status, h, body = f.send(t, http.MethodPut, path, f.dash1, "text/plain", []byte("x"))
		p := checkProblem(t, "PUT "+path+" text/plain", status, h, body, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		if !strings.Contains(p.Detail, "multipart/form-data") || !strings.Contains(p.Detail, "application/json") {
			t.Errorf("PUT %s text/plain: detail %q; want it to name multipart/form-data and application/json", path, p.Detail)
		}
	})
}

func TestDeleteTexture(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		_, theirTexture, _ := otherCatalogue(t, c)
		tex := f.createTexture(t, textPart("name", "Oak Veneer"), filePart("file", testkit.PNG(200, 100, 1)), filePart("bump_file", testkit.PNG(10, 10, 2)))
		id := idOf(tex)
		path := fmt.Sprintf("/textures/%d", id)
		status, h, body := f.sendJSON(t, http.MethodPost, "/materials", f.dash1, fmt.Sprintf(`{"name":"Veneered","texture_id":%d}`, id))
		material := fmt.Sprintf("/materials/%d", idOf(jsonObject(t, "POST /materials", status, h, body, http.StatusCreated)))

		other := fmt.Sprintf("/textures/%d", theirTexture)
		for _, tc := range []writeRefusal{
			{name: "open api token", token: "owner1", status: 403},
			{name: "texture of the other owner", path: other, status: 404},
			{name: "unknown texture", path: "/textures/999999", status: 404},
			{name: "id not a number", path: "/textures/x", status: 400, fields: []string{"id"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.run(t, f, http.MethodDelete, path)
				f.read(t, path)
				if n := f.store.Len(); n != 4 {
					t.Errorf("after a refusal the store holds %d files; want 4", n)
				}
				if status, _, body := f.get(t, f.owner2, other); status != http.StatusOK {
					t.Errorf("owner 2 GET %s = %d; want 200, its texture kept: %s", other, status, body)
				}
			})
		}

		status, h, body = f.do(t, f.request(t, http.MethodDelete, path, f.dash1, nil))
		checkDeleted(t, "DELETE "+path, status, h, body, "texture", id)
		f.checkAbsent(t, f.owner1, path)
		for _, url := range textureURLs(tex) {
			f.checkGone(t, url)
		}
		if n := f.store.Len(); n != 0 {
			t.Errorf("store holds %d files after the deletion; want 0", n)
		}
		if m := f.read(t, material); m["texture_id"] != nil {
			t.Errorf("GET %s: texture_id = %v; want null, its texture deleted", material, m["texture_id"])
		}
		status, h, body = f.do(t, f.request(t, http.MethodDelete, path, f.dash1, nil))
		checkProblem(t, "DELETE "+path+" again", status, h, body, http.StatusNotFound, "NOT_FOUND")

		// Demo texture 1: every material that used it stays, without it.
		users := f.ids(t, f.owner1, "/materials?per_page=-1&texture_id=1")
		if len(users) == 0 {
			t.Fatal("GET /materials?texture_id=1: no material uses demo texture 1")
		}
		materials := rowCount(t, c, "materials")
		status, h, body = f.do(t, f.request(t, http.MethodDelete, "/textures/1", f.dash1, nil))
		checkDeleted(t, "DELETE /textures/1", status, h, body, "texture", 1)
		for _, mid := range users {
			if m := f.read(t, fmt.Sprintf("/materials/%d", mid)); m["texture_id"] != nil {
				t.Errorf("GET /materials/%d: texture_id = %v; want null", mid, m["texture_id"])
			}
		}
		if n := rowCount(t, c, "materials"); n != materials {
			t.Errorf("after deleting a texture there are %d materials; want %d", n, materials)
		}
	})
}
