package rest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/valid"
)

// formPart is one part of a multipart/form-data body: a text field, or a
// file when filename is set.
type formPart struct {
	name     string
	value    []byte
	filename string
	// contentType is the part's declared type (files only); the service
	// never trusts it.
	contentType string
}

// textPart is a text field.
func textPart(name, value string) formPart { return formPart{name: name, value: []byte(value)} }

// filePart is a file field; the declared type follows the content's
// magic bytes as a browser would guess it, or application/octet-stream.
func filePart(name string, data []byte) formPart {
	ct := http.DetectContentType(data)
	ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif"}[ct]
	return formPart{name: name, value: data, filename: "upload" + ext, contentType: ct}
}

// encodeForm encodes parts in order and returns the body and its
// Content-Type.
func encodeForm(t *testing.T, parts []formPart) ([]byte, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.filename != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.filename))
			h.Set("Content-Type", p.contentType)
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatalf("multipart part %s: %v", p.name, err)
		}
		w.Write(p.value)
	}
	if err := mw.Close(); err != nil {
		t.Fatalf("multipart close: %v", err)
	}
	return body.Bytes(), mw.FormDataContentType()
}

// sendForm sends parts as multipart/form-data to Prefix+path.
func (f *fixture) sendForm(t *testing.T, method, path, token string, parts ...formPart) (int, http.Header, []byte) {
	t.Helper()
	body, ct := encodeForm(t, parts)
	return f.send(t, method, path, token, ct, body)
}

// send sends body with Content-Type ct ("" sends none) to Prefix+path.
func (f *fixture) send(t *testing.T, method, path, token, ct string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req := f.request(t, method, path, token, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	return f.do(t, req)
}

// sendJSON sends body as application/json to Prefix+path.
func (f *fixture) sendJSON(t *testing.T, method, path, token, body string) (int, http.Header, []byte) {
	t.Helper()
	return f.send(t, method, path, token, "application/json", []byte(body))
}

// fetch gets a stored file by the absolute URL the service returned,
// through the fixture's /files/ handler.
func (f *fixture) fetch(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(url, testPublicURL+"/files/")
	if !ok {
		t.Fatalf("fetch %s: not a URL of the fixture's file store", url)
	}
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/files/"+rest, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f.do(t, req)
}

// checkServed fetches url and checks that it serves want, byte for byte,
// as contentType with nosniff.
func (f *fixture) checkServed(t *testing.T, url string, want []byte, contentType string) {
	t.Helper()
	status, h, body := f.fetch(t, url)
	if status != http.StatusOK {
		t.Fatalf("GET %s = %d; want 200: %s", url, status, body)
	}
	if !bytes.Equal(body, want) {
		t.Errorf("GET %s = %d bytes; want the %d bytes uploaded, byte for byte", url, len(body), len(want))
	}
	if got := h.Get("Content-Type"); got != contentType {
		t.Errorf("GET %s: Content-Type = %q; want %q", url, got, contentType)
	}
	if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("GET %s: X-Content-Type-Options = %q; want nosniff", url, got)
	}
}

// checkGone checks that url is no longer served.
func (f *fixture) checkGone(t *testing.T, url string) {
	t.Helper()
	if status, _, _ := f.fetch(t, url); status != http.StatusNotFound {
		t.Errorf("GET %s = %d; want 404 (the file is removed)", url, status)
	}
}

// fieldNames lists the names of a problem's field errors.
func fieldNames(p problem.Body) []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Name)
	}
	return out
}

// checkProblem checks a problem+json answer: its status, its code and,
// when fields are given, that errors[].name are exactly those fields.
func checkProblem(t *testing.T, what string, status int, h http.Header, body []byte, wantStatus int, wantCode string, fields ...string) problem.Body {
	t.Helper()
	p := problemOf(t, what, status, h, body, wantStatus)
	if string(p.Code) != wantCode {
		t.Errorf("%s: code = %s; want %s", what, p.Code, wantCode)
	}
	if len(fields) > 0 {
		got := fieldNames(p)
		if !slices.Equal(got, fields) {
			t.Errorf("%s: errors[].name = %q; want %q: %s", what, got, fields, body)
		}
		for _, e := range p.Errors {
			if e.Reason == "" {
				t.Errorf("%s: error of %s has no reason", what, e.Name)
			}
		}
	}
	return p
}

// rowCount counts the rows of every owner of a table, bypassing tenancy.
func rowCount(t *testing.T, c *ent.Client, table string) int {
	t.Helper()
	ctx := dbtest.Sys
	var n int
	var err error
	switch table {
	case "orders":
		n, err = c.Order.Query().Count(ctx)
	case "materials":
		n, err = c.Material.Query().Count(ctx)
	case "textures":
		n, err = c.Texture.Query().Count(ctx)
	default:
		t.Fatalf("rowCount: unknown table %s", table)
	}
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// storedURL matches a URL of the fixture's file store.
var storedURL = regexp.MustCompile(`http://api\.test/files/[0-9a-f]{32}(\.[a-z]+)`)

// serverTime matches the server-set timestamps of a v1 body.
var serverTime = regexp.MustCompile(`"(created_at|updated_at)":"([^"]*)"`)

// maskBody replaces what a write generates (stored file names, the
// current time) in a compact JSON body, so that it compares with a
// golden file; it checks the timestamps are RFC 3339 and recent.
func maskBody(t *testing.T, body []byte) []byte {
	t.Helper()
	body = serverTime.ReplaceAllFunc(body, func(m []byte) []byte {
		sm := serverTime.FindSubmatch(m)
		at, err := time.Parse(time.RFC3339, string(sm[2]))
		if err != nil || time.Since(at).Abs() > 10*time.Minute || at.Location() != time.UTC {
			t.Errorf("%s = %s; want the current time, RFC 3339 in UTC", sm[1], sm[2])
		}
		return []byte(fmt.Sprintf(`"%s":"<now>"`, sm[1]))
	})
	return storedURL.ReplaceAll(body, []byte("http://api.test/files/<stored>$1"))
}

// orderForm is a valid order of configurator 1 without files: parts
// named like one of its four fields replace it (or, made by without,
// leave it out); others are added after them, in order.
func orderForm(replace ...formPart) []formPart {
	parts := []formPart{
		textPart("price", "149.90"),
		textPart("customer_details", `{"name":"Ada Lovelace","email":"ada@example.com","address":{"city":"London","zip":"N1 9GU"}}`),
		textPart("configurator_summary", `{"Frame Size":"Grand","Leg Style":"Sled","quantity":2,"total":149.9}`),
		textPart("configurator_id", "1"),
	}
	base := len(parts)
	for _, r := range replace {
		i := slices.IndexFunc(parts[:base], func(p formPart) bool { return p.name == r.name })
		switch {
		case i >= 0 && r.value == nil:
			parts = slices.Delete(parts, i, i+1)
			base--
		case i >= 0:
			parts[i] = r
		default:
			parts = append(parts, r)
		}
	}
	return parts
}

// without is a replacement for orderForm that leaves the field out.
func without(name string) formPart { return formPart{name: name} }

// createdOrder decodes a 201 answer of POST /orders and checks its
// Location.
func createdOrder(t *testing.T, status int, h http.Header, body []byte) orderJSON {
	t.Helper()
	if status != http.StatusCreated {
		t.Fatalf("POST /orders = %d; want 201: %s", status, body)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("POST /orders: Content-Type = %q; want application/json", ct)
	}
	var o orderJSON
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatalf("POST /orders: decode %s: %v", body, err)
	}
	if want := fmt.Sprintf("%s%s/orders/%d", testPublicURL, Prefix, o.ID); h.Get("Location") != want {
		t.Errorf("POST /orders: Location = %q; want %q", h.Get("Location"), want)
	}
	return o
}

func TestCreateOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		snapshot := testkit.PNG(120, 80, 1)
		front, back := testkit.JPEG(64, 64, 2), testkit.PNG(32, 48, 3)
		status, h, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, orderForm(
			filePart("configurator_snapshot", snapshot),
			filePart("configurator_print_map", front),
			filePart("configurator_print_map", back),
		)...)
		o := createdOrder(t, status, h, body)
		golden(t, "order_created", maskBody(t, body))

		if o.Status != "new" || o.Configurator.ID != 1 || o.Configurator.Name != "Oslo Lounge Chair" {
			t.Errorf("POST /orders: status %q, configurator %+v; want new, {1 Oslo Lounge Chair}", o.Status, o.Configurator)
		}
		if o.ConfiguratorSnapshot == nil || len(o.ConfiguratorPrintMap) != 2 {
			t.Fatalf("POST /orders: snapshot %v, print map %q; want a URL and 2 URLs", o.ConfiguratorSnapshot, o.ConfiguratorPrintMap)
		}
		f.checkServed(t, *o.ConfiguratorSnapshot, snapshot, "image/png")
		f.checkServed(t, o.ConfiguratorPrintMap[0], front, "image/jpeg")
		f.checkServed(t, o.ConfiguratorPrintMap[1], back, "image/png")
		if n := f.store.Len(); n != 3 {
			t.Errorf("store holds %d files; want 3", n)
		}

		// The order reads back the same, and is in the list.
		path := fmt.Sprintf("/orders/%d", o.ID)
		if status, _, got := f.get(t, f.owner1, path); status != http.StatusOK || !bytes.Equal(got, body) {
			t.Errorf("GET %s = %d %s; want 200 and the body POST answered: %s", path, status, got, body)
		}
		if ids := f.ids(t, f.owner1, "/orders?per_page=-1"); !slices.Contains(ids, o.ID) {
			t.Errorf("GET /orders = %v; want it to hold the new order %d", ids, o.ID)
		}
	})
}

func TestCreateOrderWithoutFiles(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			name  string
			parts []formPart
			price float64
			conf  int
		}{
			{"configurator 1", orderForm(), 149.90, 1},
			// The home configurator is not the only one: any of the owner's.
			{"configurator 2", orderForm(textPart("configurator_id", "2"), textPart("price", "0")), 0, 2},
			{"spaces around numbers", orderForm(textPart("configurator_id", " 2 "), textPart("price", " 12.5 ")), 12.5, 2},
			{"exponent", orderForm(textPart("price", "1.5e2")), 150, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, h, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, tc.parts...)
				o := createdOrder(t, status, h, body)
				var raw map[string]json.RawMessage
				json.Unmarshal(body, &raw)
				if string(raw["configurator_snapshot"]) != "null" || string(raw["configurator_print_map"]) != "[]" {
					t.Errorf("POST /orders: configurator_snapshot %s, configurator_print_map %s; want null, []", raw["configurator_snapshot"], raw["configurator_print_map"])
				}
				if o.Price != tc.price || o.Configurator.ID != tc.conf {
					t.Errorf("POST /orders: price %v, configurator %d; want %v, %d", o.Price, o.Configurator.ID, tc.price, tc.conf)
				}
				var details, summary map[string]any
				json.Unmarshal(o.CustomerDetails, &details)
				json.Unmarshal(o.ConfiguratorSummary, &summary)
				if details["email"] != "ada@example.com" || summary["quantity"] != float64(2) {
					t.Errorf("POST /orders: customer_details %v, configurator_summary %v; want them as sent", o.CustomerDetails, o.ConfiguratorSummary)
				}
			})
		}
		if n := f.store.Len(); n != 0 {
			t.Errorf("store holds %d files; want 0", n)
		}
	})
}

// TestCreateOrderPrintMapForms sends the print maps the three ways clients
// send arrays; the order of the URLs is the order of the images.
func TestCreateOrderPrintMapForms(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		imgs := make([][]byte, 12)
		for i := range imgs {
			imgs[i] = testkit.PNG(8+i, 8, uint8(i))
		}
		for _, tc := range []struct {
			name  string
			parts []formPart
			want  [][]byte // the images, in the order of the URLs
		}{
			{"repeated", []formPart{filePart("configurator_print_map", imgs[0]), filePart("configurator_print_map", imgs[1])}, imgs[:2]},
			{"brackets", []formPart{filePart("configurator_print_map[]", imgs[0]), filePart("configurator_print_map[]", imgs[1])}, imgs[:2]},
			{"indexed", []formPart{filePart("configurator_print_map[0]", imgs[0]), filePart("configurator_print_map[1]", imgs[1])}, imgs[:2]},
			{"indexed out of order", []formPart{filePart("configurator_print_map[1]", imgs[1]), filePart("configurator_print_map[0]", imgs[0])}, imgs[:2]},
			{"indexed past 9", func() []formPart {
				var ps []formPart
				for i := 11; i >= 0; i-- {
					ps = append(ps, filePart(fmt.Sprintf("configurator_print_map[%d]", i), imgs[i]))
				}
				return ps
			}(), imgs},
			{"indexed with a gap", []formPart{filePart("configurator_print_map[5]", imgs[1]), filePart("configurator_print_map[2]", imgs[0])}, imgs[:2]},
			{"one", []formPart{filePart("configurator_print_map", imgs[3])}, imgs[3:4]},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := f.store.Len()
				status, h, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, orderForm(tc.parts...)...)
				o := createdOrder(t, status, h, body)
				if len(o.ConfiguratorPrintMap) != len(tc.want) {
					t.Fatalf("POST /orders: configurator_print_map = %q; want %d URLs", o.ConfiguratorPrintMap, len(tc.want))
				}
				for i, url := range o.ConfiguratorPrintMap {
					f.checkServed(t, url, tc.want[i], "image/png")
				}
				if got := f.store.Len() - before; got != len(tc.want) {
					t.Errorf("store gained %d files; want %d", got, len(tc.want))
				}
			})
		}
	})
}

// TestCreateOrderRefusals sends bad orders: each is a problem naming the
// fields at fault, and leaves neither an order nor a file behind.
func TestCreateOrderRefusals(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		png1, jpg1 := testkit.PNG(16, 16, 1), testkit.JPEG(16, 16, 2)
		big := testkit.NoisePNG(testMaxFileBytes)
		manyMaps := make([]formPart, 21)
		for i := range manyMaps {
			manyMaps[i] = filePart("configurator_print_map", png1)
		}
		for _, tc := range []struct {
			name   string
			token  string
			parts  []formPart
			status int
			fields []string
		}{
			{"missing price", "", orderForm(without("price")), 400, []string{"price"}},
			{"missing customer_details", "", orderForm(without("customer_details")), 400, []string{"customer_details"}},
			{"missing configurator_summary", "", orderForm(without("configurator_summary")), 400, []string{"configurator_summary"}},
			{"missing configurator_id", "", orderForm(without("configurator_id")), 400, []string{"configurator_id"}},
			{"empty form", "", nil, 400, []string{"price", "customer_details", "configurator_summary", "configurator_id"}},
			{"price abc", "", orderForm(textPart("price", "abc")), 400, []string{"price"}},
			{"price empty", "", orderForm(textPart("price", "")), 400, []string{"price"}},
			{"price negative", "", orderForm(textPart("price", "-1")), 400, []string{"price"}},
			{"price NaN", "", orderForm(textPart("price", "NaN")), 400, []string{"price"}},
			{"price Inf", "", orderForm(textPart("price", "Inf")), 400, []string{"price"}},
			{"price out of range", "", orderForm(textPart("price", "1e400")), 400, []string{"price"}},
			{"price hexadecimal", "", orderForm(textPart("price", "0x10")), 400, []string{"price"}},
			{"price hexadecimal float", "", orderForm(textPart("price", "0x1p4")), 400, []string{"price"}},
			{"price with underscore", "", orderForm(textPart("price", "1_000")), 400, []string{"price"}},
			{"price with comma", "", orderForm(textPart("price", "149,90")), 400, []string{"price"}},
			{"customer_details not json", "", orderForm(textPart("customer_details", "not json")), 400, []string{"customer_details"}},
			{"customer_details array", "", orderForm(textPart("customer_details", "[1,2]")), 400, []string{"customer_details"}},
			{"customer_details null", "", orderForm(textPart("customer_details", "null")), 400, []string{"customer_details"}},
			{"customer_details string", "", orderForm(textPart("customer_details", `"Ada"`)), 400, []string{"customer_details"}},
			{"customer_details empty", "", orderForm(textPart("customer_details", "")), 400, []string{"customer_details"}},
			{"customer_details two objects", "", orderForm(textPart("customer_details", `{"a":1} {"b":2}`)), 400, []string{"customer_details"}},
			{"customer_details trailing brace", "", orderForm(textPart("customer_details", `{"a":1} }`)), 400, []string{"customer_details"}},
			{"configurator_summary cut off", "", orderForm(textPart("configurator_summary", `{"a":`)), 400, []string{"configurator_summary"}},
			{"configurator_id x", "", orderForm(textPart("configurator_id", "x")), 400, []string{"configurator_id"}},
			{"configurator_id 0", "", orderForm(textPart("configurator_id", "0")), 400, []string{"configurator_id"}},
			{"configurator_id -3", "", orderForm(textPart("configurator_id", "-3")), 400, []string{"configurator_id"}},
			{"configurator_id 1.5", "", orderForm(textPart("configurator_id", "1.5")), 400, []string{"configurator_id"}},
			{"configurator_id out of range", "", orderForm(textPart("configurator_id", "99999999999999999999")), 400, []string{"configurator_id"}},
			{"two faults", "", orderForm(textPart("price", "abc"), textPart("configurator_id", "x")), 400, []string{"price", "configurator_id"}},
			{"price twice", "", append(orderForm(), textPart("price", "5")), 400, []string{"price"}},
			{"configurator_id twice", "", append(orderForm(), textPart("configurator_id", "1")), 400, []string{"configurator_id"}},
			{"price as a file", "", orderForm(without("price"), filePart("price", []byte("149.90"))), 400, []string{"price"}},
			{"customer_details as a file", "", orderForm(without("customer_details"), filePart("customer_details", []byte(`{"a":1}`))), 400, []string{"customer_details"}},
			{"snapshot as text", "", orderForm(textPart("configurator_snapshot", "http://example.com/a.png")), 400, []string{"configurator_snapshot"}},
			{"print map as text", "", orderForm(textPart("configurator_print_map", "a.png")), 400, []string{"configurator_print_map"}},
			{"print map[] as text", "", orderForm(textPart("configurator_print_map[]", "a.png")), 400, []string{"configurator_print_map[]"}},
			{"print map[0] as text", "", orderForm(filePart("configurator_print_map[1]", png1), textPart("configurator_print_map[0]", "a.png")), 400, []string{"configurator_print_map[0]"}},
			{"print map[x]", "", orderForm(filePart("configurator_print_map[x]", png1)), 400, []string{"configurator_print_map[x]"}},
			{"print map[01]", "", orderForm(filePart("configurator_print_map[1]", png1), filePart("configurator_print_map[01]", png1)), 400, []string{"configurator_print_map[01]"}},
			{"print map[1000]", "", orderForm(filePart("configurator_print_map[1000]", png1)), 400, []string{"configurator_print_map[1000]"}},
			{"print map[0] twice", "", orderForm(filePart("configurator_print_map[0]", png1), filePart("configurator_print_map[0]", png1)), 400, []string{"configurator_print_map[0]"}},
			{"two snapshots", "", orderForm(filePart("configurator_snapshot", png1), filePart("configurator_snapshot", png1)), 400, []string{"configurator_snapshot"}},
			{"snapshot text file", "", orderForm(filePart("configurator_snapshot", []byte("just some text\n"))), 400, []string{"configurator_snapshot"}},
			{"snapshot text file declared png", "", orderForm(formPart{name: "configurator_snapshot", value: []byte("<svg/>"), filename: "a.png", contentType: "image/png"}), 400, []string{"configurator_snapshot"}},
			{"snapshot GIF", "", orderForm(filePart("configurator_snapshot", testkit.GIF(8, 8))), 400, []string{"configurator_snapshot"}},
			{"snapshot empty file", "", orderForm(filePart("configurator_snapshot", nil)), 400, []string{"configurator_snapshot"}},
			{"snapshot damaged PNG", "", orderForm(filePart("configurator_snapshot", png1[:20])), 400, []string{"configurator_snapshot"}},
			{"snapshot over the limit", "", orderForm(filePart("configurator_snapshot", big)), 413, []string{"configurator_snapshot"}},
			{"print map over the limit", "", orderForm(filePart("configurator_snapshot", png1), filePart("configurator_print_map", big)), 413, []string{"configurator_print_map[0]"}},
			{"second print map over the limit", "", orderForm(filePart("configurator_snapshot", png1), filePart("configurator_print_map", jpg1), filePart("configurator_print_map", big)), 413, []string{"configurator_print_map[1]"}},
			{"second print map a GIF", "", orderForm(filePart("configurator_print_map", jpg1), filePart("configurator_print_map", testkit.GIF(8, 8))), 400, []string{"configurator_print_map[1]"}},
			{"21 print maps", "", orderForm(manyMaps...), 400, []string{"configurator_print_map"}},
			// Tenancy: another owner's configurator is not found, before
			// any file is stored.
			{"configurator of the other owner", "", orderForm(textPart("configurator_id", "3"), filePart("configurator_snapshot", png1), filePart("configurator_print_map", jpg1)), 404, []string{"configurator_id"}},
			{"other owner's token on configurator 1", "owner2", orderForm(filePart("configurator_snapshot", png1)), 404, []string{"configurator_id"}},
			{"configurator 999", "", orderForm(textPart("configurator_id", "999"), filePart("configurator_snapshot", png1)), 404, []string{"configurator_id"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				token := f.owner1
				if tc.token == "owner2" {
					token = f.owner2
				}
				orders := rowCount(t, c, "orders")
				status, h, body := f.sendForm(t, http.MethodPost, "/orders", token, tc.parts...)
				code := map[int]string{400: "BAD_REQUEST", 404: "NOT_FOUND", 413: "PAYLOAD_TOO_LARGE"}[tc.status]
				p := checkProblem(t, "POST /orders", status, h, body, tc.status, code, tc.fields...)
				// A bad value is named in the detail too; a 404 says what
				// was not found ("configurator 3 not found").
				if len(tc.fields) == 1 && tc.status != http.StatusNotFound && !strings.Contains(p.Detail, tc.fields[0]) {
					t.Errorf("POST /orders: detail %q; want it to name %s", p.Detail, tc.fields[0])
				}
				if n := f.store.Len(); n != 0 {
					t.Errorf("after a refusal the store holds %d files; want 0", n)
				}
				if n := rowCount(t, c, "orders"); n != orders {
					t.Errorf("after a refusal there are %d orders; want %d", n, orders)
				}
			})
		}
	})
}

// TestCreateOrderBody checks the body as a whole: its media type and its
// size, which is refused from the declared length before it is read.
func TestCreateOrderBody(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		form, formType := encodeForm(t, orderForm())
		orders := rowCount(t, c, "orders")
		for _, tc := range []struct {
			name, contentType string
			body              []byte
			status            int
			code              string
		}{
			{"json", "application/json", []byte(`{"price":1,"customer_details":{},"configurator_summary":{},"configurator_id":1}`), 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"no content type", "", form, 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"urlencoded", "application/x-www-form-urlencoded", []byte("price=1&configurator_id=1&customer_details=%7B%7D&configurator_summary=%7B%7D"), 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"text", "text/plain", []byte("price=1"), 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"multipart without boundary", "multipart/form-data", form, 400, "BAD_REQUEST"},
			{"multipart with another boundary", "multipart/form-data; boundary=nope", form, 400, "BAD_REQUEST"},
			{"multipart cut off", formType, form[:len(form)/2], 400, "BAD_REQUEST"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, h, body := f.send(t, http.MethodPost, "/orders", f.owner1, tc.contentType, tc.body)
				checkProblem(t, "POST /orders "+tc.name, status, h, body, tc.status, tc.code)
			})
		}
		if n := rowCount(t, c, "orders"); n != orders {
			t.Errorf("after the refusals there are %d orders; want %d", n, orders)
		}

		// A declared length over the limit is refused before a byte is
		// read: the tiny, valid body is never looked at.
		t.Run("declared length over the limit", func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				length int64
				status int
			}{
				{"over", valid.MaxMultipartBody + 1, http.StatusRequestEntityTooLarge},
				{"true length", int64(len(form)), http.StatusCreated},
			} {
				body := &countingReader{r: bytes.NewReader(form)}
				req := httptest.NewRequest(http.MethodPost, Prefix+"/orders", body)
				req.ContentLength = tc.length
				req.Header.Set("Content-Type", formType)
				req.Header.Set("Authorization", "Bearer "+f.owner1)
				rec := httptest.NewRecorder()
				f.handler.ServeHTTP(rec, req)
				if rec.Code != tc.status {
					t.Fatalf("POST /orders, Content-Length %d (%s) = %d; want %d: %s", tc.length, tc.name, rec.Code, tc.status, rec.Body)
				}
				if tc.status == http.StatusRequestEntityTooLarge {
					checkProblem(t, "POST /orders", rec.Code, rec.Header(), rec.Body.Bytes(), tc.status, "PAYLOAD_TOO_LARGE")
					if body.n != 0 {
						t.Errorf("POST /orders, Content-Length %d: %d bytes of the body read; want 0", tc.length, body.n)
					}
				}
			}
		})

		// Over a real connection the answer comes at once, although the
		// declared body never arrives.
		t.Run("declared length over the limit on the wire", func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "POST %s/orders HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
				Prefix, f.owner1, formType, valid.MaxMultipartBody+1)
			conn.Write(form)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("POST /orders with Content-Length %d: no answer: %v", valid.MaxMultipartBody+1, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			checkProblem(t, "POST /orders on the wire", resp.StatusCode, resp.Header, body, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		})

		// Without a declared length the body is cut off at the limit.
		t.Run("streamed body over the limit", func(t *testing.T) {
			parts := orderForm(filePart("configurator_snapshot", make([]byte, valid.MaxMultipartBody)))
			body, ct := encodeForm(t, parts)
			cr := &countingReader{r: bytes.NewReader(body)}
			req := httptest.NewRequest(http.MethodPost, Prefix+"/orders", cr)
			req.ContentLength = -1
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Authorization", "Bearer "+f.owner1)
			rec := httptest.NewRecorder()
			f.handler.ServeHTTP(rec, req)
			checkProblem(t, "POST /orders streamed", rec.Code, rec.Header(), rec.Body.Bytes(), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
			if cr.n > valid.MaxMultipartBody+64<<10 {
				t.Errorf("POST /orders streamed: %d bytes read; want at most about the limit %d", cr.n, valid.MaxMultipartBody)
			}
		})

		// Text fields are held in memory; too much of them is 413 too.
		t.Run("text fields over the memory limit", func(t *testing.T) {
			huge := `{"notes":"` + strings.Repeat("x", 20<<20) + `"}`
			status, h, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, orderForm(textPart("customer_details", huge))...)
			checkProblem(t, "POST /orders with 20 MiB of text", status, h, body, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		})

		if n := f.store.Len(); n != 0 {
			t.Errorf("store holds %d files; want 0", n)
		}
	})
}

// countingReader records how much of a body was read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestCreateOrderTenancy: an order is its owner's alone.
func TestCreateOrderTenancy(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		status, h, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, orderForm()...)
		mine := createdOrder(t, status, h, body)
		path := "/orders/" + strconv.Itoa(mine.ID)
		status, h, body = f.get(t, f.owner2, path)
		checkProblem(t, "owner 2 GET "+path, status, h, body, http.StatusNotFound, "NOT_FOUND")
		if ids := f.ids(t, f.owner2, "/orders?per_page=-1"); slices.Contains(ids, mine.ID) {
			t.Errorf("owner 2 GET /orders = %v; want it without owner 1's order %d", ids, mine.ID)
		}

		// Owner 2 orders on its own configurator, which owner 1 cannot see.
		status, h, body = f.sendForm(t, http.MethodPost, "/orders", f.owner2, orderForm(textPart("configurator_id", "3"))...)
		theirs := createdOrder(t, status, h, body)
		if theirs.Configurator.ID != 3 || theirs.Configurator.Name != "Roadster Custom Bike" {
			t.Errorf("owner 2 POST /orders: configurator %+v; want {3 Roadster Custom Bike}", theirs.Configurator)
		}
		path = "/orders/" + strconv.Itoa(theirs.ID)
		status, h, body = f.get(t, f.owner1, path)
		checkProblem(t, "owner 1 GET "+path, status, h, body, http.StatusNotFound, "NOT_FOUND")

		// A dashboard token of owner 1 may place orders too: the dashboard
		// scope adds catalogue writes to what an Open API token does.
		status, h, body = f.sendForm(t, http.MethodPost, "/orders", f.dash1, orderForm(textPart("configurator_id", "2"))...)
		createdOrder(t, status, h, body)
	})
}
