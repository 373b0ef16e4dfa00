package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// gqlError is one GraphQL error as a client reads it.
type gqlError struct {
	Message    string
	Extensions struct{ Code, Field string }
}

// graphqlErrors runs query with token and returns the HTTP status and the
// errors of the answer.
func (f *fixture) graphqlErrors(t *testing.T, token, query string, vars map[string]any) (int, []gqlError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	f.gql.ServeHTTP(rec, req)
	var resp struct{ Errors []gqlError }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("graphql: %d %.300s", rec.Code, rec.Body.String())
	}
	return rec.Code, resp.Errors
}

// wantRefused fails unless errs is one BAD_REQUEST naming field, answered
// with a status below 500.
func wantRefused(t *testing.T, what string, status int, errs []gqlError, field string) {
	t.Helper()
	if status >= 500 || len(errs) != 1 || errs[0].Extensions.Code != "BAD_REQUEST" || errs[0].Extensions.Field != field ||
		!strings.Contains(errs[0].Message, field) || len(errs[0].Message) > 300 {
		t.Errorf("%s: %d %.400v; want one BAD_REQUEST naming %s", what, status, errs, field)
	}
}

// mp is msgpack written by hand: the cursors a client could send.
func mp(parts ...string) string {
	return base64.RawStdEncoding.EncodeToString([]byte(strings.Join(parts, "")))
}

// mpStr is a msgpack str of s (str8 or str16).
func mpStr(s string) string {
	if len(s) < 256 {
		return "\xd9" + string([]byte{byte(len(s))}) + s
	}
	return "\xda" + string([]byte{byte(len(s) >> 8), byte(len(s))}) + s
}

// TestMalformedCursors: a cursor the service did not write (empty, not
// base64, another shape, another sort key's value, too large, nested) is
// BAD_REQUEST naming its argument, on a root connection and on a
// connection nested in another's nodes, never INTERNAL or UNAVAILABLE.
func TestMalformedCursors(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		var page struct {
			Orders struct{ PageInfo struct{ EndCursor string } }
		}
		f.graphql(t, f.owner1, `{ orders(first: 1, orderBy: {field: PRICE, direction: ASC}) { edges { cursor } pageInfo { endCursor } } }`, nil, &page)
		good := page.Orders.PageInfo.EndCursor
		id := "\xa1i\x01"
		for _, tc := range []struct{ name, cursor, orderBy string }{
			{"empty", "", "PRICE"},
			{"not base64", "!!!not base64!!!", "PRICE"},
			{"an array", mp("\x92\x01\x02"), "PRICE"},
			{"a string id", mp("\x82\xa1i\xa3abc\xa1v\xcb\x40\x24\x00\x00\x00\x00\x00\x00"), "PRICE"},
			{"an unknown field", mp("\x83", id, "\xa1v\xcb\x40\x24\x00\x00\x00\x00\x00\x00", "\xa1x\x01"), "PRICE"},
			{"a string for a price", mp("\x82", id, "\xa1v\xa3abc"), "PRICE"},
			{"a float for an id sort", mp("\x82", id, "\xa1v\xcb\x40\x24\x00\x00\x00\x00\x00\x00"), "ID"},
			{"a map as value", mp("\x82", id, "\xa1v\x81\xa1a\x01"), "PRICE"},
			{"10 KB", mp("\x82", id, "\xa1v", mpStr(strings.Repeat("x", 10_000))), "STATUS"},
			{"a NUL in the value", mp("\x82", id, "\xa1v", mpStr("pend\x00ing")), "STATUS"},
			{"nested 10000 deep", mp("\x82", id, "\xa1v", strings.Repeat("\x91", 10_000), "\xc0"), "PRICE"},
			{"truncated", good[:len(good)/2], "PRICE"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, arg := range []string{"after", "before"} {
					q := `query($c: Cursor) { orders(` + arg + `: $c, orderBy: {field: ` + tc.orderBy + `, direction: ASC}) { edges { cursor } } }`
					status, errs := f.graphqlErrors(t, f.owner1, q, map[string]any{"c": tc.cursor})
					wantRefused(t, "orders("+arg+")", status, errs, arg)
				}
				q := `{ orders(after: ` + jsonString(tc.cursor) + `, orderBy: {field: ` + tc.orderBy + `, direction: ASC}) { totalCount edges { cursor } } }`
				status, errs := f.graphqlErrors(t, f.owner1, q, nil)
				wantRefused(t, "orders(after) literal", status, errs, "after")
				q = `query($c: Cursor) { configurators(first: 5) { edges { node { orders(first: 2, after: $c, orderBy: {field: ` + tc.orderBy +
					`, direction: ASC}) { totalCount edges { node { id } } } } } } }`
				status, errs = f.graphqlErrors(t, f.owner1, q, map[string]any{"c": tc.cursor})
				wantRefused(t, "configurators.orders(after)", status, errs, "after")
			})
		}
		// The service's own cursor still pages.
		var next struct {
			Orders struct{ Edges []struct{ Cursor string } }
		}
		f.graphql(t, f.owner1, `query($c: Cursor) { orders(first: 2, after: $c, orderBy: {field: PRICE, direction: ASC}) { edges { cursor } } }`,
			map[string]any{"c": good}, &next)
		if len(next.Orders.Edges) != 2 {
			t.Errorf("orders after the service's own cursor: %d edges; want 2", len(next.Orders.Edges))
		}
	})
}

// jsonString is s as a GraphQL string literal (JSON's quoting is a subset).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestTextArguments: a NUL or invalid UTF-8 in a filter is BAD_REQUEST
// naming it on both databases (PostgreSQL cannot compare such text,
// SQLite would answer no rows), on GraphQL and on REST's query strings.
func TestTextArguments(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct{ name, query, field string }{
			{"where name", `{ materials(where: {name: "a\u0000b"}) { totalCount } }`, "name"},
			{"where nameContains", `{ materials(where: {nameContains: "\u0000"}) { totalCount } }`, "nameContains"},
			{"where nameIn", `{ materials(where: {nameIn: ["ok", "a\u0000"]}) { totalCount } }`, "nameIn"},
			{"nested where", `{ materials(where: {or: [{nameHasPrefix: "x"}, {not: {nameGT: "\u0000"}}]}) { totalCount } }`, "nameGT"},
			{"orders where status", `{ orders(where: {status: "pending\u0000"}) { totalCount } }`, "status"},
			// Decoders of gqlgen's own (Time, Boolean) refuse as well.
			{"where createdAtGT not a time", `{ orders(where: {createdAtGT: "yesterday"}) { totalCount } }`, "createdAtGT"},
			{"where a time as variable", `query($t: Time) { orders(where: {createdAtLT: $t}) { totalCount } }`, "createdAtLT"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, errs := f.graphqlErrors(t, f.owner1, tc.query, map[string]any{"t": "2026-13-45"})
				wantRefused(t, tc.query, status, errs, tc.field)
				// The same as a variable.
				status, errs = f.graphqlErrors(t, f.owner1, `query($s: String) { materials(where: {nameContains: $s}) { totalCount } }`,
					map[string]any{"s": "bad\x00"})
				wantRefused(t, "variable", status, errs, "nameContains")
			})
		}
		status, errs := f.graphqlErrors(t, f.owner1, `query($s: String) { materials(where: {nameContains: $s}) { totalCount } }`,
			map[string]any{"s": "h\xc3\x28llo"})
		// encoding/json reads invalid UTF-8 as U+FFFD: a valid string.
		if status >= 500 || len(errs) != 0 {
			t.Errorf("invalid UTF-8 in a JSON variable: %d %v; want it read as U+FFFD", status, errs)
		}
		for _, path := range []string{"/orders?order_by=pr%00ice", "/orders?order=%FF", "/materials?per_page=1%00", "/orders?start_date=%C3%28"} {
			status, h, body := f.get(t, f.owner1, path)
			p := problemOf(t, path, status, h, body, 400)
			if len(p.Errors) != 1 || strings.ContainsAny(p.Detail, "\x00\ufffd") {
				t.Errorf("%s: %s; want one field named, no NUL or replacement character echoed", path, body)
			}
		}
	})
}
