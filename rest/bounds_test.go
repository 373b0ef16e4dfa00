package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/valid"
)

// nested returns a JSON object nested levels deep.
func nested(levels int) string {
	return strings.Repeat(`{"a":`, levels-1) + "{}" + strings.Repeat("}", levels-1)
}

// TestInputBounds: the bounds of internal/valid refuse the same input on
// both transports, naming the field, and nothing is stored.
func TestInputBounds(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		ctx := dbtest.Sys
		before := dbtest.Must(c.Order.Query().Count(ctx))
		big := `{"notes":"` + strings.Repeat("x", 100_000) + `"}`
		for _, tc := range []struct {
			name                   string
			price, details, summry string
			field, message         string
		}{
			{"price 1e26", "1e26", `{}`, `{}`, "price", "price must be a number from 0 to 1000000000"},
			{"customer_details nested 10000 levels deep", "10", nested(10000), `{}`, "customer_details", "customer_details nests more than 20 levels deep"},
			{"customer_details nested 21 levels deep", "10", nested(valid.MaxJSONDepth + 1), `{}`, "customer_details", "customer_details nests more than 20 levels deep"},
			{"a 100 KB string in customer_details", "10", big, `{}`, "customer_details", "customer_details is 100012 bytes of JSON; the limit is 65536"},
			{"configurator_summary nested 1000 levels deep", "10", `{}`, nested(1000), "configurator_summary", "configurator_summary nests more than 20 levels deep"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, _, body := f.sendForm(t, http.MethodPost, "/orders", f.owner1, textPart("price", tc.price),
					textPart("configurator_id", "1"), textPart("customer_details", tc.details), textPart("configurator_summary", tc.summry))
				var p problem.Body
				json.Unmarshal(body, &p)
				if status != 400 || len(p.Errors) != 1 || p.Errors[0].Name != tc.field || p.Errors[0].Reason != tc.message {
					t.Errorf("REST: %d %.300s; want 400 naming %s: %s", status, body, tc.field, tc.message)
				}
				var details, summary map[string]any
				json.Unmarshal([]byte(tc.details), &details)
				json.Unmarshal([]byte(tc.summry), &summary)
				var price float64
				json.Unmarshal([]byte(tc.price), &price)
				status, codes := f.graphqlTry(t, f.owner1, `mutation($in: CreateOrderInput!) { createOrder(input: $in) { id } }`, map[string]any{
					"in": map[string]any{"configuratorID": "1", "price": price, "customerDetails": details, "configuratorSummary": summary},
				})
				want := "BAD_REQUEST: " + graphQLSpelling(tc.message)
				if strings.Contains(tc.name, "10000") {
					// As variables, with the two levels above it, the
					// object is past encoding/json's own limit of 10000:
					// the transport refuses the request body (400).
					want = "BAD_REQUEST: the body must be a JSON object with query"
				}
				if len(codes) != 1 || !strings.HasPrefix(codes[0], want) || (status != 200 && status != 400) {
					t.Errorf("GraphQL: %d %.300v; want %s", status, codes, want)
				}
			})
		}
		if after := dbtest.Must(c.Order.Query().Count(ctx)); after != before {
			t.Errorf("orders %d after the refusals; want %d", after, before)
		}

		deep := `{"1":` + nested(25) + `}`
		status, _, body := f.postOptions(t, f.owner1, &deep)
		var env envelope
		json.Unmarshal(body, &env)
		if status != 400 || env.Success || env.Message != "options nests more than 20 levels deep" {
			t.Errorf("override options 26 levels deep: %d %s; want 400 naming options", status, body)
		}
		var opts map[string]any
		json.Unmarshal([]byte(deep), &opts)
		if _, codes := f.graphqlResult(t, f.owner1, `mutation($o: Map!) { setOptionOverrides(options: $o) { url } }`, map[string]any{"o": opts}); len(codes) != 1 ||
			codes[0] != "BAD_REQUEST: options nests more than 20 levels deep" {
			t.Errorf("GraphQL override options 26 levels deep: %v", codes)
		}
	})
}

// graphqlTry runs a GraphQL operation and returns the HTTP status and its
// errors as "CODE: message".
func (f *fixture) graphqlTry(t *testing.T, token, query string, vars map[string]any) (int, []string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	f.gql.ServeHTTP(rec, req)
	var resp struct {
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("graphql: %d %.300s", rec.Code, rec.Body.String())
	}
	var codes []string
	for _, e := range resp.Errors {
		codes = append(codes, e.Extensions.Code+": "+e.Message)
	}
	return rec.Code, codes
}

// graphQLSpelling spells the REST field names of a message as GraphQL
// does.
func graphQLSpelling(msg string) string {
	return strings.NewReplacer("customer_details", "customerDetails", "configurator_summary", "configuratorSummary").Replace(msg)
}

// TestScopeBeforeBody: a token of the wrong scope is refused 403 before
// its body is read, whatever the body holds: a category the token cannot
// see (which a body-first check answers 404), a malformed body, an
// unparsable path id.
func TestScopeBeforeBody(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			name, method, path, token, ct, body string
		}{
			{"an Open API token naming another owner's category", http.MethodPost, "/materials", f.owner2, "application/json", `{"name":"Teak","category_id":1}`},
			{"an Open API token with a malformed body", http.MethodPost, "/materials", f.owner1, "application/json", `{"name":`},
			{"an Open API token updating a material", http.MethodPut, "/materials/1", f.owner1, "application/json", `{"category_id":999}`},
			{"an Open API token deleting a bad id", http.MethodDelete, "/materials/abc", f.owner1, "", ""},
			{"an Open API token creating a texture without a body", http.MethodPost, "/textures", f.owner1, "text/plain", "x"},
			{"an Open API token updating a texture", http.MethodPut, "/textures/1", f.owner1, "application/json", `{"name":"x"}`},
			{"an Open API token deleting a texture", http.MethodDelete, "/textures/1", f.owner1, "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, _, body := f.send(t, tc.method, tc.path, tc.token, tc.ct, []byte(tc.body))
				var p problem.Body
				json.Unmarshal(body, &p)
				if status != 403 || p.Code != "FORBIDDEN" {
					t.Errorf("%d %s; want 403 FORBIDDEN", status, body)
				}
			})
		}
		status, _, body := f.send(t, http.MethodPost, "/configurator-options/set/new-options", f.dash1, "text/plain", []byte("not a form"))
		var env envelope
		if json.Unmarshal(body, &env); status != 403 || env.Success {
			t.Errorf("overrides with a dashboard token and no form: %d %s; want 403 in the envelope", status, body)
		}
		_, codes := f.graphqlResult(t, f.owner2, `mutation { createMaterial(input: {name: "Teak", categoryID: "1"}) { id } }`, nil)
		if len(codes) != 1 || !strings.HasPrefix(codes[0], "FORBIDDEN") {
			t.Errorf("GraphQL createMaterial by an Open API token naming another owner's category: %v; want FORBIDDEN", codes)
		}
	})
}

// TestBoundsDocumented: the OpenAPI document, from which REST reads its
// requests, and the GraphQL schema state the bounds internal/valid
// applies, with the same figures. Every maxLength and maximum of every
// request body the document declares is one of valid's bounds (a bound
// documented but not applied fails, as does one applied but not
// documented).
func TestBoundsDocumented(t *testing.T) {
	doc := openAPIDoc(t)
	// want is each bound by "METHOD path field" (every media type of the
	// body says the same).
	want := map[string]float64{
		"POST /orders price": valid.MaxPrice, "POST /orders customer_details": valid.MaxJSONBytes,
		"POST /orders configurator_summary":                  valid.MaxJSONBytes,
		"POST /configurator-options/set/new-options options": valid.MaxJSONBytes,
		"POST /textures name":                                valid.MaxName,
		"PUT /textures/{id} name":                            valid.MaxName,
		"PATCH /orders/{id} status":                          valid.MaxStatus,
		"PATCH /orders/{id} invoice_url":                     valid.MaxURL,
		"PATCH /orders/{id} order_storefront":                valid.MaxName,
	}
	for _, method := range []string{"POST /materials", "PUT /materials/{id}"} {
		for field, bound := range map[string]int{
			"name": valid.MaxName, "created_by": valid.MaxName, "material_file": valid.MaxURL,
			"material_type": valid.MaxKeyword, "surface": valid.MaxKeyword,
			"opacity": 1, // a fraction, the data layer's range (parity_test asks 1.01)
		} {
			want[method+" "+field] = float64(bound)
		}
	}
	documented := map[string]float64{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil {
				continue
			}
			for mt, media := range op.RequestBody.Value.Content {
				for field, prop := range media.Schema.Value.Properties {
					var bound *float64
					switch v := prop.Value; {
					case v.MaxLength != nil:
						n := float64(*v.MaxLength)
						bound = &n
					case v.Max != nil:
						bound = v.Max
					}
					if bound == nil {
						continue
					}
					key := method + " " + path + " " + field
					if prev, seen := documented[key]; seen && prev != *bound {
						t.Errorf("%s: %s says %v, another media type %v", key, mt, *bound, prev)
					}
					documented[key] = *bound
				}
			}
		}
	}
	for key, bound := range documented {
		if w, ok := want[key]; !ok {
			t.Errorf("%s: the document states a bound of %v that internal/valid does not apply", key, bound)
		} else if w != bound {
			t.Errorf("%s: the document states %v; internal/valid applies %v", key, bound, w)
		}
	}
	for key, w := range want {
		if _, ok := documented[key]; !ok {
			t.Errorf("%s: internal/valid applies %v; the document does not state it", key, w)
		}
	}
	order := doc.Paths.Value("/orders").Post.RequestBody.Value.Content["multipart/form-data"].Schema.Value
	for _, d := range []string{order.Properties["customer_details"].Value.Description, order.Properties["configurator_summary"].Value.Description} {
		if !strings.Contains(d, fmt.Sprintf("nested at most %d levels", valid.MaxJSONDepth)) {
			t.Errorf("description %q does not state the nesting limit", d)
		}
	}

	// GraphQL: the descriptions of the inputs.
	gql := generated.NewExecutableSchema(generated.Config{}).Schema()
	for _, tc := range []struct{ typ, field, want string }{
		{"CreateOrderInput", "price", fmt.Sprintf("from 0 to %d", valid.MaxPrice)},
		{"CreateOrderInput", "customerDetails", fmt.Sprintf("at most %d bytes of JSON, nested at most %d levels", valid.MaxJSONBytes, valid.MaxJSONDepth)},
		{"CreateOrderInput", "configuratorSummary", fmt.Sprintf("at most %d bytes of JSON, nested at most %d levels", valid.MaxJSONBytes, valid.MaxJSONDepth)},
		{"CreateTextureInput", "name", fmt.Sprintf("at most %d bytes", valid.MaxName)},
		{"UpdateTextureInput", "name", fmt.Sprintf("at most %d bytes", valid.MaxName)},
		{"CreateMaterialInput", "name", fmt.Sprintf("at most %d bytes", valid.MaxName)},
		{"CreateMaterialInput", "materialFile", fmt.Sprintf("at most %d bytes", valid.MaxURL)},
		{"UpdateMaterialInput", "surface", fmt.Sprintf("At most %d bytes", valid.MaxKeyword)},
		{"UpdateMaterialInput", "createdBy", fmt.Sprintf("At most %d bytes", valid.MaxName)},
	} {
		f := gql.Types[tc.typ].Fields.ForName(tc.field)
		if f == nil || !strings.Contains(f.Description, tc.want) {
			t.Errorf("GraphQL %s.%s description %q; want it to say %q", tc.typ, tc.field, f.Description, tc.want)
		}
	}
	if d := gql.Mutation.Fields.ForName("setOptionOverrides").Description; !strings.Contains(d, fmt.Sprintf("At most %d bytes of JSON", valid.MaxJSONBytes)) {
		t.Errorf("setOptionOverrides description %q does not state the bounds of options", d)
	}
}
