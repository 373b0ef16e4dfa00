package rest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestUnstorableText: text PostgreSQL cannot store (NUL, invalid UTF-8)
// is a 400 naming the field on every backend, through JSON and multipart
// bodies alike, never a database error.
func TestUnstorableText(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		order := func(details string) []formPart {
			return []formPart{textPart("price", "10"), textPart("configurator_id", "1"),
				textPart("customer_details", details), textPart("configurator_summary", `{}`)}
		}
		for _, tc := range []struct {
			name  string
			send  func() (int, http.Header, []byte)
			field string
		}{
			{"material name with NUL", func() (int, http.Header, []byte) {
				return f.sendJSON(t, http.MethodPost, "/materials", f.dash1, `{"name": "Oak\u0000"}`)
			}, "name"},
			{"material update with NUL", func() (int, http.Header, []byte) {
				return f.sendJSON(t, http.MethodPut, "/materials/1", f.dash1, `{"surface": "\u0000"}`)
			}, "surface"},
			{"customer details value with NUL", func() (int, http.Header, []byte) {
				return f.sendForm(t, http.MethodPost, "/orders", f.owner1, order(`{"name": "Ada\u0000"}`)...)
			}, "customer_details"},
			{"customer details key with NUL", func() (int, http.Header, []byte) {
				return f.sendForm(t, http.MethodPost, "/orders", f.owner1, order(`{"a\u0000": 1}`)...)
			}, "customer_details"},
			{"texture name not UTF-8", func() (int, http.Header, []byte) {
				return f.sendForm(t, http.MethodPost, "/textures", f.dash1, textPart("name", "Lin\xffen"), filePart("file", testkit.PNG(8, 8, 1)))
			}, "name"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, h, body := tc.send()
				p := problemOf(t, tc.name, status, h, body, http.StatusBadRequest)
				if len(p.Errors) != 1 || p.Errors[0].Name != tc.field {
					raw, _ := json.Marshal(p)
					t.Errorf("%s: problem %s; want errors[0].name %q", tc.name, raw, tc.field)
				}
			})
		}
		if n := f.store.Len(); n != 0 {
			t.Errorf("store holds %d files after the refusals; want 0", n)
		}
	})
}
