package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/storage"
)

// world is a small two-tenant dataset: owner A has two configurators and
// most rows; owner B has one configurator and a few rows of each kind, so
// that any tenancy leak shows up as a foreign id.
type world struct {
	c       *ent.Client
	h       http.Handler
	tokens  *auth.Tokens
	a, b    *ent.Owner
	a1, a2  *ent.Configurator
	b1      *ent.Configurator
	tokA    string // open_api, home a1
	tokB    string // open_api, home b1
	dashA   string // dashboard of A
	recA    *ent.APIToken
	idsOf   map[string]map[int]bool // owner name -> ids of every kind, "kind:id"
	orderAt []time.Time
	// files is where mutations store uploads; store counts what it holds.
	files *storage.Files
	store *storage.Memory
}

var day0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// shareBase starts the share links of the test handler.
const shareBase = "http://viewer.test/share/"

func newWorld(t *testing.T, c *ent.Client) *world {
	t.Helper()
	ctx := dbtest.Sys
	A, B := dbtest.NewTenant(t, c, "A", "Sofa", "Chair"), dbtest.NewTenant(t, c, "B", "Bike")
	w := &world{c: c, a: A.Owner, b: B.Owner, a1: A.Confs[0], a2: A.Confs[1], b1: B.Confs[0]}

	for _, o := range []struct {
		owner *ent.Owner
		n     int
	}{{w.a, 3}, {w.b, 1}} {
		for i := 0; i < o.n; i++ {
			cat := dbtest.Must(c.MaterialCategory.Create().SetOwnerID(o.owner.ID).
				SetTitle(fmt.Sprintf("%s cat %d", o.owner.Name, i)).SetCreatedAt(day0.Add(time.Duration(i) * time.Hour)).Save(ctx))
			tex := dbtest.Must(c.Texture.Create().SetOwnerID(o.owner.ID).SetName(fmt.Sprintf("%s tex %d", o.owner.Name, i)).
				SetCategoryID(cat.ID).SetCreatedAt(day0.Add(time.Duration(i) * time.Hour)).Save(ctx))
			_ = tex
		}
	}
	catsA := dbtest.Must(c.MaterialCategory.Query().Where().All(ctx))
	texA := dbtest.Must(c.Texture.Query().All(ctx))
	// 23 materials of A over its 3 categories; 2 of B.
	for i := 0; i < 23; i++ {
		m := c.Material.Create().SetOwnerID(w.a.ID).SetName(fmt.Sprintf("mat %02d", i)).
			SetCategoryID(catsA[i%3].ID).SetColor("#A0B0C0").
			SetCreatedAt(day0.Add(time.Duration(i) * time.Minute))
		if i%2 == 0 {
			m.SetTextureID(texA[i%3].ID)
		}
		dbtest.Must(m.Save(ctx))
	}
	for i := 0; i < 2; i++ {
		dbtest.Must(c.Material.Create().SetOwnerID(w.b.ID).SetName(fmt.Sprintf("B mat %d", i)).
			SetCategoryID(catsA[3].ID).Save(ctx))
	}
	// 12 orders of A: 8 on a1, 4 on a2, one per day from day0; 2 of B.
	for i := 0; i < 12; i++ {
		conf := w.a1
		if i >= 8 {
			conf = w.a2
		}
		at := day0.AddDate(0, 0, i)
		w.orderAt = append(w.orderAt, at)
		dbtest.Must(c.Order.Create().SetOwnerID(w.a.ID).SetConfiguratorID(conf.ID).
			SetPrice(float64(100+(i*37)%250) + 0.5).SetStatus("new").
			SetCustomerDetails(json.RawMessage(fmt.Sprintf(`{"name":"customer %d"}`, i))).
			SetConfiguratorSummary(json.RawMessage(`{"Color":"Red"}`)).
			SetCreatedAt(at).SetUpdatedAt(at).Save(ctx))
	}
	for i := 0; i < 2; i++ {
		dbtest.Must(c.Order.Create().SetOwnerID(w.b.ID).SetConfiguratorID(w.b1.ID).SetPrice(9).
			SetCustomerDetails(json.RawMessage("{}")).SetConfiguratorSummary(json.RawMessage("{}")).
			SetCreatedAt(day0).Save(ctx))
	}
	// Forms, fields, options with variations and sets, for both owners.
	for _, conf := range []*ent.Configurator{w.a1, w.a2, w.b1} {
		form := dbtest.Must(c.ConfiguratorForm.Create().SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID).Save(ctx))
		for i := 0; i < 3; i++ {
			dbtest.Must(c.FormField.Create().SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID).SetFormID(form.ID).
				SetTitle(fmt.Sprintf("%s field %d", conf.Name, i)).Save(ctx))
		}
		var opts []*ent.ConfiguratorOption
		for i, typ := range []configuratoroption.Type{configuratoroption.TypeSelect, configuratoroption.TypeMaterial, configuratoroption.TypeText} {
			o := dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID).
				SetTitle(fmt.Sprintf("%s option %d", conf.Name, i)).SetType(typ).SetPosition(3 - i).
				SetSettings(json.RawMessage(`{"visible":true}`)).Save(ctx))
			opts = append(opts, o)
			for j := 0; j < 3; j++ {
				dbtest.Must(c.OptionVariation.Create().SetOwnerID(conf.OwnerID).SetConfiguratorOptionID(o.ID).
					SetName(fmt.Sprintf("v%d", j)).SetPosition(2 - j).SetSelected(j == 0).Save(ctx))
			}
		}
		dbtest.Must(c.OptionSet.Create().SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID).
			SetName(conf.Name + " set").AddOptions(opts[:2]...).Save(ctx))
	}

	w.tokens = dbtest.Tokens(c)
	w.tokA, w.recA = dbtest.OpenAPI(t, w.tokens, w.a1.ID)
	w.tokB, _ = dbtest.OpenAPI(t, w.tokens, w.b1.ID)
	w.dashA, _ = dbtest.Dashboard(t, w.tokens, w.a.ID)
	w.store = storage.NewMemory()
	w.files = &storage.Files{Store: w.store, BaseURL: "http://files.test/files/", MaxBytes: 64 << 10}
	w.h = endpoint.NewHandler(graph.NewResolver(c, graph.WithFiles(w.files), graph.WithShareBase(shareBase)), w.tokens, endpoint.HandlerOptions{})
	return w
}

type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// code is the extensions.code of the first error, or "".
func (r gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	s, _ := r.Errors[0].Extensions["code"].(string)
	return s
}

// query posts a GraphQL operation with an optional bearer token.
func (w *world) query(t *testing.T, token, q string, vars map[string]any) gqlResponse {
	t.Helper()
	header := ""
	if token != "" {
		header = "Bearer " + token
	}
	return w.raw(t, header, q, vars)
}

// raw posts a GraphQL operation with a verbatim Authorization header.
func (w *world) raw(t *testing.T, header, q string, vars map[string]any) gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if header != "" {
		req.Header.Set("Authorization", header)
	}
	r, _ := serveGQL(t, w.h, req)
	return r
}

// serveGQL runs req through h and decodes its GraphQL answer; it returns
// the answer's headers too.
func serveGQL(t *testing.T, h http.Handler, req *http.Request) (gqlResponse, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r gqlResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("response is not JSON (%d): %s", rec.Code, rec.Body.String())
	}
	r.Status = rec.Code
	return r, rec.Header()
}

// ok runs q and decodes its data into v, failing on any error.
func (w *world) ok(t *testing.T, token, q string, vars map[string]any, v any) {
	t.Helper()
	r := w.query(t, token, q, vars)
	if len(r.Errors) > 0 || r.Status != http.StatusOK {
		t.Fatalf("query failed (%d): %+v\n%s", r.Status, r.Errors, q)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data: %v: %s", err, r.Data)
	}
}
