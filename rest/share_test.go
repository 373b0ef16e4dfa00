package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// postOptions sends the override endpoint's form-data with the given
// options field (omitted when nil) and returns status, header and body.
func (f *fixture) postOptions(t *testing.T, token string, options *string) (int, http.Header, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if options != nil {
		mw.WriteField("options", *options)
	}
	mw.Close()
	req := f.request(t, http.MethodPost, "/configurator-options/set/new-options", token, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return f.do(t, req)
}

// envelope is the {success, message, data} answer of the override endpoint.
type envelope struct {
	Success bool
	Message string
	Data    *string
}

// shareLink posts options and returns the share URL, failing otherwise.
func (f *fixture) shareLink(t *testing.T, token string, options map[string]any) string {
	t.Helper()
	raw, _ := json.Marshal(options)
	s := string(raw)
	status, h, body := f.postOptions(t, token, &s)
	var env envelope
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" || json.Unmarshal(body, &env) != nil || !env.Success || env.Data == nil || env.Message == "" {
		t.Fatalf("POST new-options = %d %s; want 200 and {success: true, message, data: URL}", status, body)
	}
	return *env.Data
}

// keyOf is the snapshot key at the end of a share URL.
func keyOf(link string) string { return link[strings.LastIndex(link, "/")+1:] }

// shared is GET /shared/{key} as the v1 option records, by option id.
type sharedBody struct {
	Key     string
	ID      int
	Name    string `json:"configurator_name"`
	Options []map[string]any
}

func optionsByID(opts []map[string]any) map[int]map[string]any {
	m := map[int]map[string]any{}
	for _, o := range opts {
		m[int(o["id"].(float64))] = o
	}
	return m
}

// variations returns the parameter_list of an option record.
func variations(o map[string]any) []map[string]any {
	var out []map[string]any
	for _, v := range o["parameter_list"].([]any) {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestShareLinks is the override flow end to end: an integrator posts
// overrides for options of every type of demo configurator 1, and the
// link opens the configurator with exactly those choices applied, on REST
// and GraphQL, while token reads stay as stored.
func TestShareLinks(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		var before []map[string]any
		f.ok(t, f.owner1, "/configurator-options?per_page=-1", &before)
		byTitle := map[string]map[string]any{}
		for _, o := range before {
			if int(o["configurator_id"].(float64)) == 1 {
				byTitle[o["title"].(string)] = o
			}
		}
		// pick returns the option of title and the id of its variation named name.
		pick := func(title, name string) (int, int) {
			o := byTitle[title]
			if o == nil {
				t.Fatalf("demo configurator 1 has no option %q", title)
			}
			for _, v := range variations(o) {
				if v["name"] == name {
					return int(o["id"].(float64)), int(v["id"].(float64))
				}
			}
			t.Fatalf("option %q has no variation %q", title, name)
			return 0, 0
		}
		type choice struct {
			title, variation string
			fields           map[string]any
		}
		choices := []choice{
			{"Frame Size", "Grand", nil},
			{"Leg Style", "Sled", nil},
			{"Extras", "Matching Footstool", nil},
			{"Cushion Style", "Tufted", nil},
			{"Seat Height", "High (48 cm)", nil},
			{"Frame Wood", "American Walnut", map[string]any{"material_id": 12, "material_category_id": 2, "selected_parts": []string{"frame"}}},
			{"Engraving", "Seat Label", map[string]any{"text_value": "For Ada", "custom_color": true, "text_font_family": "Inter"}},
			{"Quantity", "Footstools", map[string]any{"numerical_default": 4}},
			{"Upholstery Pattern", "Solid", nil},
		}
		options := map[string]any{}
		for _, ch := range choices {
			oid, vid := pick(ch.title, ch.variation)
			entry := map[string]any{"id": vid}
			for k, v := range ch.fields {
				entry[k] = v
			}
			options[fmt.Sprint(oid)] = entry
		}
		link := f.shareLink(t, f.owner1, options)
		if !strings.HasPrefix(link, "http") && len(link) != 32 {
			t.Fatalf("share link = %q; want a URL ending in the key", link)
		}
		key := keyOf(link)

		// The link opens the configurator without a token.
		var got sharedBody
		h := f.ok(t, "", "/shared/"+key, &got)
		if got.Key != key || got.ID != 1 || got.Name != "Oslo Lounge Chair" || len(got.Options) != len(byTitle) {
			t.Fatalf("GET /shared/%s = key %q, configurator %d %q, %d options; want configurator 1 with its %d options", key, got.Key, got.ID, got.Name, len(got.Options), len(byTitle))
		}
		if h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("shared read lacks Access-Control-Allow-Origin: *")
		}
		// Expected: the stored records with the spec's rules applied by hand.
		want := map[int]map[string]any{}
		for _, o := range byTitle {
			var cp map[string]any
			raw, _ := json.Marshal(o)
			json.Unmarshal(raw, &cp)
			want[int(o["id"].(float64))] = cp
		}
		for _, ch := range choices {
			oid, vid := pick(ch.title, ch.variation)
			o := want[oid]
			for _, v := range variations(o) {
				match := int(v["id"].(float64)) == vid
				switch o["type"] {
				case "select", "radio", "checkbox", "select_thumb", "arrows":
					v["selected"] = match
				case "material", "text", "numeral":
					if match {
						for k, x := range ch.fields {
							if k == "selected_parts" {
								v[k] = []any{"frame"}
							} else if n, ok := x.(int); ok {
								v[k] = float64(n)
							} else {
								v[k] = x
							}
						}
					}
				}
			}
		}
		gotByID := optionsByID(got.Options)
		for id, w := range want {
			g := gotByID[id]
			if !reflect.DeepEqual(g, w) {
				gj, _ := json.Marshal(g)
				wj, _ := json.Marshal(w)
				t.Errorf("shared option %d (%s) =\n%s\nwant\n%s", id, w["type"], gj, wj)
			}
		}

		// GraphQL returns the same choices through sharedConfigurator.
		var gq struct {
			SharedConfigurator struct {
				Name    string
				Options []struct {
					ID            string
					ParameterList []struct {
						ID               string
						Selected         bool
						MaterialID       *int
						TextValue        *string
						NumericalDefault *int
					}
				}
			}
		}
		f.graphql(t, "", `query($k: String!) { sharedConfigurator(key: $k) { name options { id parameterList { id selected materialID textValue numericalDefault } } } }`,
			map[string]any{"k": key}, &gq)
		if gq.SharedConfigurator.Name != got.Name || len(gq.SharedConfigurator.Options) != len(got.Options) {
			t.Fatalf("GraphQL sharedConfigurator = %+v; want the REST answer's %d options", gq.SharedConfigurator, len(got.Options))
		}
		for i, o := range gq.SharedConfigurator.Options {
			r := got.Options[i]
			for j, v := range o.ParameterList {
				rv := variations(r)[j]
				if v.ID != fmt.Sprint(rv["id"]) || v.Selected != rv["selected"].(bool) ||
					!sameNumber(v.MaterialID, rv["material_id"]) || !sameNumber(v.NumericalDefault, rv["numerical_default"]) {
					t.Errorf("GraphQL option %s variation %s = %+v; REST has %v", o.ID, v.ID, v, rv)
				}
			}
		}

		// Token reads are unchanged.
		var after []map[string]any
		f.ok(t, f.owner1, "/configurator-options?per_page=-1", &after)
		if !reflect.DeepEqual(after, before) {
			t.Errorf("token reads changed after overrides were stored")
		}

		// Same content, same link; new content, new link; the old link
		// keeps its meaning.
		if again := f.shareLink(t, f.owner1, options); again != link {
			t.Errorf("same overrides = %s; want the same link %s", again, link)
		}
		sizeID, grandID := pick("Frame Size", "Grand")
		_, compactID := pick("Frame Size", "Compact")
		second := f.shareLink(t, f.owner1, map[string]any{fmt.Sprint(sizeID): map[string]any{"id": compactID}})
		if second == link {
			t.Errorf("new overrides returned the old link")
		}
		f.ok(t, "", "/shared/"+key, &got)
		for _, v := range variations(optionsByID(got.Options)[sizeID]) {
			if v["selected"] != (int(v["id"].(float64)) == grandID) {
				t.Errorf("old link after new overrides: variation %v selected = %v; want Grand still chosen", v["name"], v["selected"])
			}
		}

		// A revoked token's links stop working.
		tokID := tokenRecordOf(t, f, f.owner1)
		if err := f.tokens.Revoke(t.Context(), tokID); err != nil {
			t.Fatal(err)
		}
		status, hd, body := f.get(t, "", "/shared/"+key)
		problemOf(t, "GET /shared after revoke", status, hd, body, http.StatusNotFound)
	})
}

// sameNumber compares a GraphQL Int with a REST JSON number or null.
func sameNumber(g *int, r any) bool {
	if g == nil || r == nil {
		return g == nil && r == nil
	}
	n, ok := r.(float64)
	return ok && float64(*g) == n
}

// tokenRecordOf finds the record id behind a JWT.
func tokenRecordOf(t *testing.T, f *fixture, jwt string) int {
	t.Helper()
	v, err := f.tokens.Resolve(t.Context(), jwt)
	if err != nil {
		t.Fatal(err)
	}
	return v.TokenID
}

// TestShareLinkRefusals: bad override data is refused in the envelope,
// naming what is wrong; another configurator's options cannot be
// overridden.
func TestShareLinkRefusals(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		var opts []map[string]any
		f.ok(t, f.owner1, "/configurator-options?per_page=-1", &opts)
		first := map[int]map[string]any{}
		for _, o := range opts {
			conf := int(o["configurator_id"].(float64))
			if _, ok := first[conf]; !ok {
				first[conf] = o
			}
		}
		var material map[string]any
		for _, o := range opts {
			if o["type"] == "material" && int(o["configurator_id"].(float64)) == 1 {
				material = o
			}
		}
		own, otherConf := first[1], first[2]
		ownID, ownVar := int(own["id"].(float64)), int(variations(own)[0]["id"].(float64))
		matID, matVar := int(material["id"].(float64)), int(variations(material)[0]["id"].(float64))
		otherID, otherVar := int(otherConf["id"].(float64)), int(variations(otherConf)[0]["id"].(float64))
		str := func(s string) *string { return &s }
		valid := str(fmt.Sprintf(`{"%d": {"id": %d}}`, ownID, ownVar))

		for _, tc := range []struct {
			name    string
			token   string
			options *string
			status  int
			says    string
		}{
			{"missing options", f.owner1, nil, 400, "options is required"},
			{"malformed JSON", f.owner1, str(`{"1": `), 400, "options must be a JSON object"},
			{"not an object", f.owner1, str(`[1, 2]`), 400, "options must be a JSON object"},
			{"empty object", f.owner1, str(`{}`), 400, "at least one option"},
			{"option of another configurator", f.owner1, str(fmt.Sprintf(`{"%d": {"id": %d}}`, otherID, otherVar)), 400, fmt.Sprint(otherID)},
			{"other owner's token", f.owner2, valid, 400, fmt.Sprint(ownID)},
			{"variation of another option", f.owner1, str(fmt.Sprintf(`{"%d": {"id": %d}}`, ownID, otherVar)), 400, fmt.Sprint(otherVar)},
			{"id not an integer", f.owner1, str(fmt.Sprintf(`{"%d": {"id": "%d"}}`, ownID, ownVar)), 400, "id"},
			{"material_id a string", f.owner1, str(fmt.Sprintf(`{"%d": {"id": %d, "material_id": "5"}}`, matID, matVar)), 400, "material_id"},
			{"unknown material", f.owner1, str(fmt.Sprintf(`{"%d": {"id": %d, "material_id": 99999}}`, matID, matVar)), 400, "material 99999 not found"},
			{"field of another type", f.owner1, str(fmt.Sprintf(`{"%d": {"id": %d, "text_value": "x"}}`, matID, matVar)), 400, "text_value"},
			{"dashboard token", f.dash1, valid, 403, "Open API token"},
			{"no token", "", valid, 401, ""},
			{"revoked token", f.revoked, valid, 401, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, h, body := f.postOptions(t, tc.token, tc.options)
				var env envelope
				if err := json.Unmarshal(body, &env); err != nil || status != tc.status || env.Success || env.Data != nil || h.Get("Content-Type") != "application/json" {
					t.Fatalf("POST new-options = %d %s; want %d and {success: false, message, data: null}", status, body, tc.status)
				}
				if !strings.Contains(env.Message, tc.says) {
					t.Errorf("message = %q; want it to name %q", env.Message, tc.says)
				}
			})
		}
		// Form-urlencoded works as form-data does; JSON is 415.
		req := f.request(t, http.MethodPost, "/configurator-options/set/new-options", f.owner1, strings.NewReader(url.Values{"options": {*valid}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if status, _, body := f.do(t, req); status != http.StatusOK {
			t.Errorf("urlencoded POST = %d %s; want 200", status, body)
		}
		req = f.request(t, http.MethodPost, "/configurator-options/set/new-options", f.owner1, strings.NewReader(*valid))
		req.Header.Set("Content-Type", "application/json")
		if status, _, body := f.do(t, req); status != http.StatusUnsupportedMediaType || !strings.Contains(string(body), `"success":false`) {
			t.Errorf("JSON POST = %d %s; want 415 in the envelope", status, body)
		}
		for _, key := range []string{"0123456789abcdef0123456789abcdef", "nope", "..%2F..%2Fetc"} {
			status, h, body := f.get(t, "", "/shared/"+key)
			problemOf(t, "GET /shared/"+key, status, h, body, http.StatusNotFound)
		}
	})
}
