package graph_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

func TestAuth(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		key := []byte("0123456789abcdef0123456789abcdef")
		sign := func(method jwt.SigningMethod, k any, claims jwt.MapClaims) string {
			s, err := jwt.NewWithClaims(method, claims).SignedString(k)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		sub := strconv.Itoa(w.recA.ID)
		valid := jwt.MapClaims{"iss": auth.Issuer, "sub": sub, "kind": "open_api"}
		with := func(k string, v any) jwt.MapClaims {
			m := jwt.MapClaims{}
			for a, b := range valid {
				m[a] = b
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		revoked, rec := dbtest.OpenAPI(t, w.tokens, w.a1.ID)
		if err := w.tokens.Revoke(context.Background(), rec.ID); err != nil {
			t.Fatal(err)
		}
		unsigned := jwt.NewWithClaims(jwt.SigningMethodNone, valid)
		none, _ := unsigned.SignedString(jwt.UnsafeAllowNoneSignatureType)

		for _, tc := range []struct {
			name   string
			header string
			status int
			code   string
		}{
			{"no header", "", http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"not bearer", "Basic dXNlcjpwYXNz", http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"empty bearer", "Bearer ", http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"garbage", "Bearer not.a.jwt", http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"other key", "Bearer " + sign(jwt.SigningMethodHS256, []byte("another-key-another-key-another-k"), valid), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"alg none", "Bearer " + none, http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"alg HS512 same key", "Bearer " + sign(jwt.SigningMethodHS512, key, valid), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"expired", "Bearer " + sign(jwt.SigningMethodHS256, key, with("exp", time.Now().Add(-time.Hour).Unix())), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"wrong issuer", "Bearer " + sign(jwt.SigningMethodHS256, key, with("iss", "someone")), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"unknown record", "Bearer " + sign(jwt.SigningMethodHS256, key, with("sub", "999999")), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"kind differs from record", "Bearer " + sign(jwt.SigningMethodHS256, key, with("kind", "dashboard")), http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"revoked", "Bearer " + revoked, http.StatusUnauthorized, "UNAUTHENTICATED"},
			{"valid, expiry in the future", "Bearer " + sign(jwt.SigningMethodHS256, key, with("exp", time.Now().Add(time.Hour).Unix())), http.StatusOK, ""},
			{"valid", "Bearer " + w.tokA, http.StatusOK, ""},
			{"valid, lower-case scheme", "bearer " + w.tokA, http.StatusOK, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := w.queryHeader(t, tc.header, `{ viewer { ownerID tokenKind } ordersPage { pagination { total } } }`)
				if r.Status != tc.status || r.code() != tc.code {
					t.Fatalf("status %d code %q; want %d %q (errors %+v)", r.Status, r.code(), tc.status, tc.code, r.Errors)
				}
			})
		}

		// An expired token says so (RFC 6750's error_description), so that
		// a client can tell "log in again" from a forged token; a forged
		// token that is also expired is only invalid.
		expired := sign(jwt.SigningMethodHS256, key, with("exp", time.Now().Add(-time.Hour).Unix()))
		forged := sign(jwt.SigningMethodHS256, []byte("another-key-another-key-another-k"), with("exp", time.Now().Add(-time.Hour).Unix()))
		for token, want := range map[string][2]string{
			expired: {"token expired", `Bearer error="invalid_token", error_description="token expired"`},
			forged:  {"invalid token", `Bearer error="invalid_token"`},
		} {
			req := httptest.NewRequest(http.MethodGet, "/graphql?query=%7Bviewer%7BownerID%7D%7D", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			w.h.ServeHTTP(rec, req)
			var r gqlResponse
			json.Unmarshal(rec.Body.Bytes(), &r)
			if rec.Code != http.StatusUnauthorized || len(r.Errors) != 1 || r.Errors[0].Message != want[0] || rec.Header().Get("WWW-Authenticate") != want[1] {
				t.Errorf("%s: %d %q %+v; want 401 %q with %s", want[0], rec.Code, rec.Header().Get("WWW-Authenticate"), r.Errors, want[0], want[1])
			}
		}
	})
}

// TestAnonymous: without a token only share links and __typename are
// answered, and introspection when it is public; any other operation is a
// 401, whatever its shape.
func TestAnonymous(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		public := endpoint.NewHandler(graph.NewResolver(c), w.tokens, endpoint.HandlerOptions{PublicIntrospection: true})
		for _, tc := range []struct {
			name, query string
			// status by default (introspection needs a token) and with
			// GRAPHQL_INTROSPECTION=public.
			status, public int
		}{
			{"schema", `{ __schema { queryType { name } } }`, http.StatusUnauthorized, http.StatusOK},
			{"named introspection", `query IntrospectionQuery { __schema { types { name } } __type(name: "Order") { name } }`, http.StatusUnauthorized, http.StatusOK},
			{"introspection in a fragment", `query { ...F } fragment F on Query { __type(name: "Order") { name } }`, http.StatusUnauthorized, http.StatusOK},
			{"typename", `{ __typename }`, http.StatusOK, http.StatusOK},
			{"share link", `{ sharedConfigurator(key: "00000000000000000000000000000000") { id } }`, http.StatusOK, http.StatusOK},
			{"data", `{ ordersPage { data { id } } }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"data beside introspection", `{ __schema { queryType { name } } orders { totalCount } }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"data beside a share link", `{ sharedConfigurator(key: "x") { id } viewer { ownerID } }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"data in a fragment", `query { ...F } fragment F on Query { orders { totalCount } }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"data in the second operation", `query A { __typename } query B { orders { totalCount } }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"mutation", `mutation { deleteMaterial(id: 1) }`, http.StatusUnauthorized, http.StatusUnauthorized},
			{"unparsable", `{`, http.StatusUnauthorized, http.StatusUnauthorized},
			// Validation does not run for a refused caller, so its messages
			// do not describe the schema.
			{"misspelt field", `{ ordrsPage { data { id } } }`, http.StatusUnauthorized, http.StatusUnauthorized},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, h := range []struct {
					name   string
					h      http.Handler
					status int
				}{{"default", w.h, tc.status}, {"public", public, tc.public}} {
					w := &world{h: h.h}
					r := w.query(t, "", tc.query, nil)
					if r.Status != h.status {
						t.Errorf("%s: status %d; want %d (%+v)", h.name, r.Status, h.status, r.Errors)
					}
					if h.status == http.StatusUnauthorized && (r.code() != "UNAUTHENTICATED" || r.Data != nil) {
						t.Errorf("%s: code %q, data %s; want UNAUTHENTICATED and no data", h.name, r.code(), r.Data)
					}
				}
			})
		}
		// With a token, introspection is answered.
		var schema struct {
			Schema struct{ QueryType struct{ Name string } } `json:"__schema"`
		}
		w.ok(t, w.tokA, `{ __schema { queryType { name } } }`, nil, &schema)
		if schema.Schema.QueryType.Name != "Query" {
			t.Errorf("introspection with a token: %+v", schema)
		}
	})
}

// TestDashboardWrites checks the scope rule on writes, which both
// transports reach through the same write workflows (internal/app), and
// the tenancy rules, which they reach through the same ent client.
func TestDashboardWrites(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctxOf := func(tok string) context.Context {
			v, err := w.tokens.Resolve(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			return viewer.NewContext(context.Background(), v)
		}
		openA, dashA, openB := ctxOf(w.tokA), ctxOf(w.dashA), ctxOf(w.tokB)
		anon := context.Background()

		writes := app.New(c, nil, nil)
		if _, err := writes.CreateMaterial(openA, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: "x"}}); apperr.KindOf(err) != apperr.Forbidden {
			t.Errorf("material create with an Open API token: %v; want Forbidden", err)
		}
		if _, err := writes.CreateTexture(openA, app.CreateTexture{Name: "x"}); apperr.KindOf(err) != apperr.Forbidden {
			t.Errorf("texture create with an Open API token: %v; want Forbidden", err)
		}
		if _, err := c.Material.Create().SetName("x").Save(anon); apperr.KindOf(err) != apperr.Unauthenticated {
			t.Errorf("material create without a viewer: %v; want Unauthenticated", err)
		}
		m, err := c.Material.Create().SetName("new").SetColor("#112233").Save(dashA)
		if err != nil {
			t.Fatalf("material create with a dashboard token: %v", err)
		}
		if m.OwnerID != w.a.ID {
			t.Errorf("new material owner %d; want the viewer's %d", m.OwnerID, w.a.ID)
		}
		// Another owner's category is not found, as a read of it would be.
		catB := dbtest.Must(c.MaterialCategory.Query().All(openB))[0]
		if _, err := c.Material.Create().SetName("x").SetCategoryID(catB.ID).Save(dashA); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("material pointing at B's category: %v; want NotFound", err)
		}
		// B's material cannot be updated or deleted by A: not found.
		matB := dbtest.Must(c.Material.Query().First(openB))
		if err := c.Material.UpdateOneID(matB.ID).SetName("hijack").Exec(dashA); !ent.IsNotFound(err) {
			t.Errorf("update of B's material by A: %v; want not found", err)
		}
		if err := c.Material.DeleteOneID(matB.ID).Exec(dashA); !ent.IsNotFound(err) {
			t.Errorf("delete of B's material by A: %v; want not found", err)
		}
		// An order cannot be placed on another owner's configurator.
		_, err = c.Order.Create().SetConfiguratorID(w.b1.ID).SetPrice(1).
			SetCustomerDetails(json.RawMessage("{}")).SetConfiguratorSummary(json.RawMessage("{}")).Save(openA)
		if apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("order on B's configurator by A: %v; want NotFound", err)
		}
		o, err := c.Order.Create().SetConfiguratorID(w.a2.ID).SetPrice(1).
			SetCustomerDetails(json.RawMessage("{}")).SetConfiguratorSummary(json.RawMessage("{}")).Save(openA)
		if err != nil || o.OwnerID != w.a.ID {
			t.Errorf("order on A's own configurator: %v (owner %v)", err, o)
		}
		// An option set cannot take another owner's option (a many-to-many edge).
		optB := dbtest.Must(c.ConfiguratorOption.Query().First(openB))
		optA := dbtest.Must(c.ConfiguratorOption.Query().First(openA))
		if _, err := c.OptionSet.Create().SetConfiguratorID(w.a1.ID).SetName("s").AddOptionIDs(optA.ID, optB.ID).Save(openA); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("option set with B's option: %v; want NotFound", err)
		}
		if _, err := c.OptionSet.Create().SetConfiguratorID(w.a1.ID).SetName("s").AddOptionIDs(optA.ID).Save(openA); err != nil {
			t.Errorf("option set with A's own option: %v", err)
		}
		// Bad colours are refused by the data model itself.
		if _, err := c.Material.Create().SetName("x").SetColor("red").Save(dashA); !ent.IsValidationError(err) {
			t.Errorf("colour red: %v; want a validation error", err)
		}
	})
}

func (w *world) queryHeader(t *testing.T, header, q string) gqlResponse {
	t.Helper()
	return w.raw(t, header, q, nil)
}

// TestBodyLimit: an oversized body is refused with 413, before it is read
// when it declares its length, and at the limit when it does not.
func TestBodyLimit(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		big := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat("x", valid.MaxJSONBody) + `"}}`
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(big))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.tokA)
		rec := httptest.NewRecorder()
		w.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("declared oversized body: %d; want 413", rec.Code)
		}
		req = httptest.NewRequest(http.MethodPost, "/graphql", io.MultiReader(strings.NewReader(big)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.tokA)
		rec = httptest.NewRecorder()
		w.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("undeclared oversized body: %d; want 413", rec.Code)
		}
	})
}

// TestViewerConfigurator: an Open API token reads its home configurator
// with its edges through viewer (on PostgreSQL, loading the options one
// by one once failed on DISTINCT over their json column).
func TestViewerConfigurator(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		var got struct {
			Viewer struct {
				Configurator struct {
					ID      gid
					Options []struct {
						Title      string
						Variations []struct{ ID gid }
					}
				}
			}
		}
		w.ok(t, w.tokA, `{ viewer { configurator { id options { title variations { id } } } } }`, nil, &got)
		if int(got.Viewer.Configurator.ID) != w.a1.ID {
			t.Errorf("viewer.configurator %+v; want configurator %d", got.Viewer.Configurator, w.a1.ID)
		}
		want := c.ConfiguratorOption.Query().Where(configuratoroption.ConfiguratorID(w.a1.ID)).CountX(dbtest.Sys)
		if want == 0 || len(got.Viewer.Configurator.Options) != want {
			t.Errorf("%d options; want the %d of configurator %d", len(got.Viewer.Configurator.Options), want, w.a1.ID)
		}
	})
}
