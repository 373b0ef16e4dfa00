package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// upload posts a GraphQL multipart request (graphql-multipart-request-spec):
// files maps the variable paths (such as "variables.input.file", whose
// value in vars is null) to their contents.
func (w *world) upload(t *testing.T, token, q string, vars map[string]any, files map[string][]byte) gqlResponse {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	mw.WriteField("operations", string(ops))
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	m := map[string][]string{}
	for i, p := range paths {
		m[fmt.Sprint(i)] = []string{p}
	}
	mj, _ := json.Marshal(m)
	mw.WriteField("map", string(mj))
	for i, p := range paths {
		fw, _ := mw.CreateFormFile(fmt.Sprint(i), "upload.bin")
		fw.Write(files[p])
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/graphql", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r, _ := serveGQL(t, w.h, req)
	return r
}

// fetch reads a stored file through the files handler, as a client
// following the returned URL would.
func (w *world) fetch(t *testing.T, url string) (int, string, []byte) {
	t.Helper()
	path, ok := strings.CutPrefix(url, "http://files.test/files/")
	if !ok {
		t.Fatalf("url %q is not under the files base", url)
	}
	rec := httptest.NewRecorder()
	w.files.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+path, nil))
	return rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes()
}

// gid is a GraphQL ID in a decoded response: a string holding an integer.
type gid int

func (g *gid) UnmarshalJSON(b []byte) error {
	var s json.Number
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n, err := s.Int64()
	*g = gid(n)
	return err
}

// field is the extensions.field of the first error.
func (r gqlResponse) field() string {
	if len(r.Errors) == 0 {
		return ""
	}
	s, _ := r.Errors[0].Extensions["field"].(string)
	return s
}

const createOrder = `mutation($input: CreateOrderInput!) { createOrder(input: $input) {
  id price status customerDetails configuratorSummary configuratorSnapshot configuratorPrintMap configurator { id name } } }`

func TestCreateOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		snap, jpg, pngMap := testkit.PNG(40, 30, 90), testkit.JPEG(64, 64, 90), testkit.PNG(8, 8, 90)
		input := func(conf int) map[string]any {
			return map[string]any{
				"configuratorID": conf, "price": 1299.5,
				"customerDetails":     map[string]any{"name": "Ada", "address": map[string]any{"city": "Oslo"}},
				"configuratorSummary": map[string]any{"Frame": "Oak"},
			}
		}

		t.Run("with images", func(t *testing.T) {
			in := input(w.a1.ID)
			in["configuratorSnapshot"], in["configuratorPrintMap"] = nil, []any{nil, nil}
			r := w.upload(t, w.tokA, createOrder, map[string]any{"input": in}, map[string][]byte{
				"variables.input.configuratorSnapshot":   snap,
				"variables.input.configuratorPrintMap.0": jpg,
				"variables.input.configuratorPrintMap.1": pngMap,
			})
			if r.Status != http.StatusOK || len(r.Errors) > 0 {
				t.Fatalf("createOrder = %d %+v", r.Status, r.Errors)
			}
			var d struct {
				CreateOrder struct {
					ID                   gid
					Price                float64
					Status               string
					CustomerDetails      map[string]any
					ConfiguratorSnapshot string
					ConfiguratorPrintMap []string
					Configurator         struct{ ID gid }
				}
			}
			json.Unmarshal(r.Data, &d)
			o := d.CreateOrder
			if o.Price != 1299.5 || o.Status != "new" || int(o.Configurator.ID) != w.a1.ID || o.CustomerDetails["name"] != "Ada" {
				t.Errorf("created order = %+v", o)
			}
			want := map[string]struct {
				body  []byte
				ctype string
			}{o.ConfiguratorSnapshot: {snap, "image/png"}}
			if len(o.ConfiguratorPrintMap) != 2 {
				t.Fatalf("print map = %v; want 2 URLs", o.ConfiguratorPrintMap)
			}
			want[o.ConfiguratorPrintMap[0]] = struct {
				body  []byte
				ctype string
			}{jpg, "image/jpeg"}
			want[o.ConfiguratorPrintMap[1]] = struct {
				body  []byte
				ctype string
			}{pngMap, "image/png"}
			for url, f := range want {
				status, ctype, body := w.fetch(t, url)
				if status != http.StatusOK || ctype != f.ctype || !bytes.Equal(body, f.body) {
					t.Errorf("GET %s = %d %s, %d bytes; want 200 %s, the %d uploaded bytes", url, status, ctype, len(body), f.ctype, len(f.body))
				}
			}
			var again struct {
				Order struct{ ConfiguratorPrintMap []string }
			}
			w.ok(t, w.tokA, `query($id: ID!) { order(id: $id) { configuratorPrintMap } }`, map[string]any{"id": o.ID}, &again)
			if !slices.Equal(again.Order.ConfiguratorPrintMap, o.ConfiguratorPrintMap) {
				t.Errorf("stored print map = %v; want %v", again.Order.ConfiguratorPrintMap, o.ConfiguratorPrintMap)
			}
		})

		t.Run("without images", func(t *testing.T) {
			var d struct {
				CreateOrder struct {
					ConfiguratorSnapshot *string
					ConfiguratorPrintMap []string
				}
			}
			w.ok(t, w.tokA, createOrder, map[string]any{"input": input(w.a2.ID)}, &d)
			if d.CreateOrder.ConfiguratorSnapshot != nil || d.CreateOrder.ConfiguratorPrintMap == nil || len(d.CreateOrder.ConfiguratorPrintMap) != 0 {
				t.Errorf("order without images = %+v; want no snapshot and an empty print map", d.CreateOrder)
			}
		})

		big := append(testkit.PNG(4, 4, 90), make([]byte, 64<<10)...)
		for _, tc := range []struct {
			name   string
			token  string
			edit   func(map[string]any)
			files  map[string][]byte
			status int
			code   string
			field  string
		}{
			{name: "another owner's configurator", token: w.tokA, edit: func(in map[string]any) { in["configuratorID"] = w.b1.ID },
				code: "NOT_FOUND", field: "configuratorID"},
			{name: "unknown configurator", token: w.tokA, edit: func(in map[string]any) { in["configuratorID"] = 999999 },
				code: "NOT_FOUND", field: "configuratorID"},
			{name: "negative price", token: w.tokA, edit: func(in map[string]any) { in["price"] = -1 }, code: "BAD_REQUEST", field: "price"},
			{name: "snapshot is text", token: w.tokA, edit: func(in map[string]any) { in["configuratorSnapshot"] = nil },
				files: map[string][]byte{"variables.input.configuratorSnapshot": []byte("hello, not an image")},
				code:  "BAD_REQUEST", field: "configuratorSnapshot"},
			{name: "second print map too large", token: w.tokA, edit: func(in map[string]any) { in["configuratorPrintMap"] = []any{nil, nil} },
				files: map[string][]byte{"variables.input.configuratorPrintMap.0": pngMap, "variables.input.configuratorPrintMap.1": big},
				code:  "PAYLOAD_TOO_LARGE", field: "configuratorPrintMap[1]"},
			{name: "no token", edit: func(map[string]any) {}, status: http.StatusUnauthorized, code: "UNAUTHENTICATED"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := w.store.Len()
				in := input(w.a1.ID)
				tc.edit(in)
				var r gqlResponse
				if tc.files != nil {
					r = w.upload(t, tc.token, createOrder, map[string]any{"input": in}, tc.files)
				} else {
					r = w.query(t, tc.token, createOrder, map[string]any{"input": in})
				}
				if tc.status != 0 && r.Status != tc.status {
					t.Errorf("status = %d; want %d", r.Status, tc.status)
				}
				if r.code() != tc.code || r.field() != tc.field {
					t.Errorf("createOrder = %s (field %q) %+v; want %s (field %q)", r.code(), r.field(), r.Errors, tc.code, tc.field)
				}
				if w.store.Len() != before {
					t.Errorf("store holds %d files after the refusal; want %d (nothing kept)", w.store.Len(), before)
				}
			})
		}
		ctx := dbtest.Sys
		if n := dbtest.Must(c.Order.Query().Count(ctx)); n != 14+2 {
			t.Errorf("orders in the database = %d; want 16 (14 seeded, 2 created)", n)
		}
	})
}

func TestMaterialWrites(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctx := dbtest.Sys
		catA := dbtest.Must(c.MaterialCategory.Query().Where().First(ctx))
		matB := dbtest.Must(c.Material.Query().Where(material.OwnerID(w.b.ID)).First(ctx))
		catB := *matB.CategoryID

		const create = `mutation($in: CreateMaterialInput!) { createMaterial(input: $in) { id name color opacity status categoryID category { id } } }`
		var d struct {
			CreateMaterial struct {
				ID         gid
				Name       string
				Color      string
				Opacity    float64
				Status     bool
				CategoryID gid
			}
		}
		w.ok(t, w.dashA, create, map[string]any{"in": map[string]any{"name": "Teak", "color": "#112233", "categoryID": catA.ID}}, &d)
		m := d.CreateMaterial
		if m.Name != "Teak" || m.Color != "#112233" || m.Opacity != 1 || !m.Status || int(m.CategoryID) != catA.ID {
			t.Errorf("created = %+v", m)
		}

		for _, tc := range []struct {
			name, token, q string
			vars           map[string]any
			code, field    string
		}{
			{"open api token creates", w.tokA, create, map[string]any{"in": map[string]any{"name": "x"}}, "FORBIDDEN", ""},
			{"bad colour", w.dashA, create, map[string]any{"in": map[string]any{"name": "x", "color": "red"}}, "BAD_REQUEST", "color"},
			{"opacity above 1", w.dashA, create, map[string]any{"in": map[string]any{"name": "x", "opacity": 1.5}}, "BAD_REQUEST", "opacity"},
			{"empty name", w.dashA, create, map[string]any{"in": map[string]any{"name": ""}}, "BAD_REQUEST", "name"},
			{"relative material file", w.dashA, create, map[string]any{"in": map[string]any{"name": "x", "materialFile": "x.glb"}}, "BAD_REQUEST", "materialFile"},
			{"another owner's category", w.dashA, create, map[string]any{"in": map[string]any{"name": "x", "categoryID": catB}}, "NOT_FOUND", "categoryID"},
			{"update another owner's material", w.dashA, `mutation($id: ID!) { updateMaterial(id: $id, input: {name: "y"}) { id } }`,
				map[string]any{"id": matB.ID}, "NOT_FOUND", ""},
			{"update with open api token", w.tokA, `mutation($id: ID!) { updateMaterial(id: $id, input: {name: "y"}) { id } }`,
				map[string]any{"id": m.ID}, "FORBIDDEN", ""},
			{"delete another owner's material", w.dashA, `mutation($id: ID!) { deleteMaterial(id: $id) }`, map[string]any{"id": matB.ID}, "NOT_FOUND", ""},
			{"delete with open api token", w.tokA, `mutation($id: ID!) { deleteMaterial(id: $id) }`, map[string]any{"id": m.ID}, "FORBIDDEN", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := w.query(t, tc.token, tc.q, tc.vars)
				if r.code() != tc.code || r.field() != tc.field {
					t.Errorf("= %s (field %q) %+v; want %s (field %q)", r.code(), r.field(), r.Errors, tc.code, tc.field)
				}
			})
		}

		var u struct {
			UpdateMaterial struct {
				Name, Color string
				CategoryID  *gid
			}
		}
		w.ok(t, w.dashA, `mutation($id: ID!) { updateMaterial(id: $id, input: {name: "Teak oiled", clearCategory: true}) { name color categoryID } }`,
			map[string]any{"id": m.ID}, &u)
		if u.UpdateMaterial.Name != "Teak oiled" || u.UpdateMaterial.Color != "#112233" || u.UpdateMaterial.CategoryID != nil {
			t.Errorf("updated = %+v; want the new name, the colour kept, no category", u.UpdateMaterial)
		}
		var del struct{ DeleteMaterial gid }
		w.ok(t, w.dashA, `mutation($id: ID!) { deleteMaterial(id: $id) }`, map[string]any{"id": m.ID}, &del)
		if del.DeleteMaterial != m.ID {
			t.Errorf("deleteMaterial = %d; want %d", del.DeleteMaterial, m.ID)
		}
		if r := w.query(t, w.dashA, `query($id: ID!) { material(id: $id) { id } }`, map[string]any{"id": m.ID}); r.code() != "NOT_FOUND" {
			t.Errorf("material after delete = %s; want NOT_FOUND", r.code())
		}
		if r := w.query(t, w.dashA, `mutation($id: ID!) { deleteMaterial(id: $id) }`, map[string]any{"id": m.ID}); r.code() != "NOT_FOUND" {
			t.Errorf("second delete = %s; want NOT_FOUND", r.code())
		}
	})
}

func TestTextureWrites(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		img := testkit.PNG(200, 100, 90)
		const create = `mutation($in: CreateTextureInput!) { createTexture(input: $in) {
		  id name textureFile textureThumbnail50 textureThumbnail100 bumpFile } }`
		type tex struct {
			ID                                                         gid
			Name, TextureFile, TextureThumbnail50, TextureThumbnail100 string
			BumpFile                                                   *string
		}
		var d struct{ CreateTexture tex }
		r := w.upload(t, w.dashA, create, map[string]any{"in": map[string]any{"name": "Linen", "file": nil}},
			map[string][]byte{"variables.in.file": img})
		if len(r.Errors) > 0 {
			t.Fatalf("createTexture: %+v", r.Errors)
		}
		json.Unmarshal(r.Data, &d)
		created := d.CreateTexture
		if _, _, body := w.fetch(t, created.TextureFile); !bytes.Equal(body, img) {
			t.Errorf("texture file differs from the upload")
		}
		for url, want := range map[string]image.Point{created.TextureThumbnail50: {50, 25}, created.TextureThumbnail100: {100, 50}} {
			_, ctype, body := w.fetch(t, url)
			cfg, err := png.DecodeConfig(bytes.NewReader(body))
			if err != nil || ctype != "image/png" || (image.Point{cfg.Width, cfg.Height}) != want {
				t.Errorf("thumbnail %s = %s %dx%d (%v); want a %v PNG", url, ctype, cfg.Width, cfg.Height, err, want)
			}
		}
		if w.store.Len() != 3 {
			t.Errorf("store holds %d files; want 3 (image and two thumbnails)", w.store.Len())
		}

		for _, tc := range []struct {
			name, token string
			file        []byte
			code, field string
		}{
			{"open api token", w.tokA, img, "FORBIDDEN", ""},
			{"gif", w.dashA, []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "BAD_REQUEST", "file"},
			// The header passes the content check; the pixels do not decode.
			{"png with damaged pixels", w.dashA, img[:len(img)-20], "BAD_REQUEST", "file"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := w.upload(t, tc.token, create, map[string]any{"in": map[string]any{"name": "x", "file": nil}},
					map[string][]byte{"variables.in.file": tc.file})
				if r.code() != tc.code || r.field() != tc.field || w.store.Len() != 3 {
					t.Errorf("= %s (field %q), store %d; want %s (field %q), store 3", r.code(), r.field(), w.store.Len(), tc.code, tc.field)
				}
			})
		}

		img2 := testkit.JPEG(64, 128, 90)
		var u struct{ UpdateTexture tex }
		r = w.upload(t, w.dashA, `mutation($id: ID!, $in: UpdateTextureInput!) { updateTexture(id: $id, input: $in) {
		  id name textureFile textureThumbnail50 textureThumbnail100 bumpFile } }`,
			map[string]any{"id": created.ID, "in": map[string]any{"file": nil}}, map[string][]byte{"variables.in.file": img2})
		if len(r.Errors) > 0 {
			t.Fatalf("updateTexture: %+v", r.Errors)
		}
		json.Unmarshal(r.Data, &u)
		if u.UpdateTexture.Name != "Linen" || u.UpdateTexture.TextureFile == created.TextureFile {
			t.Errorf("updated = %+v; want the name kept and a new file", u.UpdateTexture)
		}
		if status, _, _ := w.fetch(t, created.TextureFile); status != http.StatusNotFound {
			t.Errorf("old texture file = %d; want 404 (removed)", status)
		}
		if _, ctype, body := w.fetch(t, u.UpdateTexture.TextureFile); ctype != "image/jpeg" || !bytes.Equal(body, img2) {
			t.Errorf("new texture file = %s, %d bytes; want the JPEG upload", ctype, len(body))
		}
		if w.store.Len() != 3 {
			t.Errorf("store holds %d files after the update; want 3", w.store.Len())
		}

		ctx := dbtest.Sys
		texB := dbtest.Must(c.Texture.Query().Where().All(ctx))
		for _, tb := range texB {
			if tb.OwnerID == w.b.ID {
				if r := w.query(t, w.dashA, `mutation($id: ID!) { deleteTexture(id: $id) }`, map[string]any{"id": tb.ID}); r.code() != "NOT_FOUND" {
					t.Errorf("delete of another owner's texture = %s; want NOT_FOUND", r.code())
				}
			}
		}
		var del struct{ DeleteTexture gid }
		w.ok(t, w.dashA, `mutation($id: ID!) { deleteTexture(id: $id) }`, map[string]any{"id": created.ID}, &del)
		if del.DeleteTexture != created.ID || w.store.Len() != 0 {
			t.Errorf("deleteTexture = %d, store %d; want %d, store 0", del.DeleteTexture, w.store.Len(), created.ID)
		}
	})
}

// TestUpdateOrder moves an order on through GraphQL: a dashboard token of
// its owner changes the given fields and clears with null or a flag; an
// Open API token is FORBIDDEN, another owner's order NOT_FOUND, and bad
// input a BAD_REQUEST naming the field.
func TestUpdateOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctx := dbtest.Sys
		mine := c.Order.Query().Where(order.OwnerID(w.a.ID)).FirstIDX(ctx)
		theirs := c.Order.Query().Where(order.OwnerID(w.b.ID)).FirstIDX(ctx)
		const m = `mutation($id: ID!, $in: UpdateOrderInput!) { updateOrder(id: $id, input: $in) { id status invoiceURL orderStorefront configurator { id } } }`
		var r struct {
			UpdateOrder struct {
				Status          string
				InvoiceURL      *string
				OrderStorefront *string
			}
		}
		w.ok(t, w.dashA, m, map[string]any{"id": mine, "in": map[string]any{"status": "paid", "invoiceURL": "https://shop.example.com/i/1", "orderStorefront": "Oslo"}}, &r)
		if u := r.UpdateOrder; u.Status != "paid" || u.InvoiceURL == nil || u.OrderStorefront == nil || *u.OrderStorefront != "Oslo" {
			t.Errorf("updateOrder: %+v", u)
		}
		w.ok(t, w.dashA, m, map[string]any{"id": mine, "in": map[string]any{"invoiceURL": nil, "clearOrderStorefront": true}}, &r)
		if u := r.UpdateOrder; u.Status != "paid" || u.InvoiceURL != nil || u.OrderStorefront != nil {
			t.Errorf("updateOrder clearing: %+v; want both cleared, the status kept", u)
		}
		for _, tc := range []struct {
			token string
			id    int
			in    map[string]any
			code  string
		}{
			{w.tokA, mine, map[string]any{"status": "paid"}, "FORBIDDEN"},
			{w.dashA, theirs, map[string]any{"status": "paid"}, "NOT_FOUND"},
			{w.dashA, mine, map[string]any{"status": ""}, "BAD_REQUEST"},
			{w.dashA, mine, map[string]any{"status": nil}, "BAD_REQUEST"},
			{w.dashA, mine, map[string]any{"invoiceURL": "javascript:alert(1)"}, "BAD_REQUEST"},
		} {
			if res := w.query(t, tc.token, m, map[string]any{"id": tc.id, "in": tc.in}); res.code() != tc.code {
				t.Errorf("updateOrder %v: %+v; want %s", tc.in, res.Errors, tc.code)
			}
		}
		if got := c.Order.GetX(ctx, theirs).Status; got == "paid" {
			t.Errorf("another owner's order was changed")
		}
	})
}
