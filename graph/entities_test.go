package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/ratelimit"
)

// entitiesDoc is what a federation gateway sends for the entities of
// this subgraph: one `... on Type` fragment per entity type it needs.
const entitiesDoc = `query($r: [_Any!]!) { _entities(representations: $r) { __typename
  ... on Order { id price configurator { id } }
  ... on Material { id name }
  ... on Configurator { id name }
  ... on MaterialCategory { id title }
  ... on Texture { id name }
  ... on ConfiguratorForm { id }
  ... on FormField { id title }
  ... on ConfiguratorOption { id title }
  ... on OptionVariation { id name }
  ... on OptionSet { id name }
} }`

// entityAnswer is an answer of _entities, its errors with their paths.
type entityAnswer struct {
	Status int
	Data   struct {
		Entities []map[string]any `json:"_entities"`
	} `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// errorAt returns the code and message of the error at _entities[i].
func (a entityAnswer) errorAt(i int) (code, message string, n int) {
	for _, e := range a.Errors {
		if len(e.Path) == 2 && e.Path[0] == "_entities" && e.Path[1] == float64(i) {
			code, _ = e.Extensions["code"].(string)
			message = e.Message
			n++
		}
	}
	return code, message, n
}

// entitiesOf posts doc with the representations reps through h.
func entitiesOf(t *testing.T, h http.Handler, token, doc string, reps []map[string]any) entityAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": doc, "variables": map[string]any{"r": reps}})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var a entityAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer is not JSON (%d): %s", rec.Code, rec.Body.String())
	}
	a.Status = rec.Code
	return a
}

func rep(typ string, id any) map[string]any { return map[string]any{"__typename": typ, "id": id} }

// TestEntitiesTenancy: _entities reads every entity type under the
// caller's tenancy, whichever token it holds: its owner's records come
// back at their positions, another owner's are null with NOT_FOUND at
// theirs, and no field of them appears anywhere in the answer.
func TestEntitiesTenancy(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		own := owned(t, c)
		var reps []map[string]any
		var owners []int
		for key, owner := range own {
			typ, id, _ := strings.Cut(key, ":")
			if typ == "Owner" {
				continue
			}
			reps = append(reps, rep(typ, id))
			owners = append(owners, owner)
		}
		for _, tok := range []struct{ name, token string }{{"open_api", w.tokA}, {"dashboard", w.dashA}} {
			a := entitiesOf(t, w.h, tok.token, entitiesDoc, reps)
			if a.Status != http.StatusOK || len(a.Data.Entities) != len(reps) {
				t.Fatalf("%s: %d, %d entities for %d representations: %+v", tok.name, a.Status, len(a.Data.Entities), len(reps), a.Errors)
			}
			for i, r := range reps {
				got := a.Data.Entities[i]
				code, msg, n := a.errorAt(i)
				if owners[i] == w.a.ID {
					if got == nil || got["__typename"] != r["__typename"] || got["id"] != r["id"] || n != 0 {
						t.Errorf("%s: %v: got %v, error %s %q; want the record", tok.name, r, got, code, msg)
					}
					continue
				}
				if got != nil || code != "NOT_FOUND" || n != 1 {
					t.Errorf("%s: another owner's %v: got %v, %d errors (%s %q); want null and NOT_FOUND at its position", tok.name, r, got, n, code, msg)
				}
			}
			seen := map[string]bool{}
			for _, e := range a.Data.Entities {
				collect(e, seen)
			}
			for key := range seen {
				if own[key] != w.a.ID {
					t.Errorf("%s: the answer holds %s of owner %d", tok.name, key, own[key])
				}
			}
		}
	})
}

// TestEntitiesBadRepresentations: a representation this subgraph cannot
// read (no __typename, a type that is not one of its entities, a missing,
// null or malformed id) is null with a BAD_REQUEST naming it at its own
// position, and the others of the same type are read as usual: one bad
// representation fails neither its type's batch nor the request.
func TestEntitiesBadRepresentations(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		orders := dbtest.Must(c.Order.Query().Where().All(dbtest.Sys))
		var mine []int
		for _, o := range orders {
			if o.OwnerID == w.a.ID {
				mine = append(mine, o.ID)
			}
		}
		good := func(i int) map[string]any { return rep("Order", strconv.Itoa(mine[i])) }
		reps := []map[string]any{
			good(0),
			{"id": strconv.Itoa(mine[1])},
			{"__typename": 7, "id": "1"},
			rep("Nope", "1"),
			rep("Viewer", "1"),
			rep("PageInfo", "1"),
			{"__typename": "Order"},
			rep("Order", nil),
			rep("Order", "x1"),
			rep("Order", "-3"),
			rep("Order", map[string]any{"id": 1}),
			rep("Order", 1.5),
			good(2),
		}
		a := entitiesOf(t, w.h, w.tokA, entitiesDoc, reps)
		if a.Status != http.StatusOK || len(a.Data.Entities) != len(reps) {
			t.Fatalf("%d, %d entities for %d representations: %+v", a.Status, len(a.Data.Entities), len(reps), a.Errors)
		}
		for _, i := range []int{0, len(reps) - 1} {
			if got := a.Data.Entities[i]; got == nil || got["id"] != reps[i]["id"] {
				t.Errorf("representation %d (%v): got %v; want the order", i, reps[i], got)
			}
		}
		for i := 1; i < len(reps)-1; i++ {
			code, msg, n := a.errorAt(i)
			if a.Data.Entities[i] != nil || code != "BAD_REQUEST" || n != 1 || !strings.Contains(msg, fmt.Sprintf("representations[%d]", i)) {
				t.Errorf("representation %d (%v): got %v, %d errors at it (%s %q); want null and one BAD_REQUEST naming representations[%d]",
					i, reps[i], a.Data.Entities[i], n, code, msg, i)
			}
		}
		if len(a.Errors) != len(reps)-2 {
			t.Errorf("%d errors; want one per bad representation: %+v", len(a.Errors), a.Errors)
		}
	})
}

// TestEntitiesBound: one request reads at most query.MaxByIDs
// representations; one more is refused with a BAD_REQUEST naming
// representations, before anything is read.
func TestEntitiesBound(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		doc := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Order { id } } }`
		reps := make([]map[string]any, query.MaxByIDs)
		for i := range reps {
			reps[i] = rep("Order", strconv.Itoa(i+1))
		}
		if a := entitiesOf(t, w.h, w.dashA, doc, reps); a.Status != 200 || len(a.Data.Entities) != len(reps) {
			t.Errorf("%d representations: %d, %d entities; want every position answered", len(reps), a.Status, len(a.Data.Entities))
		}
		a := entitiesOf(t, w.h, w.dashA, doc, append(reps, rep("Order", "1")))
		if len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != "BAD_REQUEST" ||
			!strings.Contains(a.Errors[0].Message, "representations holds 1001") || a.Data.Entities != nil {
			t.Errorf("%d representations: %+v, %v; want one BAD_REQUEST naming representations and no entities", len(reps)+1, a.Errors, a.Data.Entities)
		}
	})
}

// TestEntitiesCost: the representations are priced like the rows of a
// list, before anything runs: each costs its selection, so 1,000 orders
// with 9 fields take 10 units of the token's budget (as a page of 1,000
// such orders would), where one takes 1.
func TestEntitiesCost(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		lim := ratelimit.NewMemory(60)
		h := endpoint.NewHandler(graph.NewResolver(c), w.tokens, endpoint.HandlerOptions{Limiter: lim})
		doc := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Order { id price status createdAt updatedAt customerDetails configuratorSummary configuratorSnapshot orderStorefront } } }`
		reps := make([]map[string]any, 1000)
		for i := range reps {
			reps[i] = rep("Order", strconv.Itoa(i+1))
		}
		left := 60
		for _, tc := range []struct {
			n, units int
		}{{1, 1}, {1000, 10}} {
			body, _ := json.Marshal(map[string]any{"query": doc, "variables": map[string]any{"r": reps[:tc.n]}})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+w.tokA)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			left -= tc.units
			if got := rec.Header().Get("RateLimit-Remaining"); got != strconv.Itoa(left) {
				t.Errorf("%d representations: RateLimit-Remaining %s; want %d (%d units)", tc.n, got, left, tc.units)
			}
		}
	})
}

// TestEntitiesOneStatementPerType: _entities reads the representations of
// each type with one statement, however many it holds and in whatever
// order they come, with duplicates and another owner's ids among them.
func TestEntitiesOneStatementPerType(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			var mu sync.Mutex
			var sent []string
			c := dbtest.Open(t, b.URL(t), ent.Log(func(a ...any) {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, fmt.Sprint(a...))
			}))
			w := newWorld(t, c)
			h := endpoint.NewHandler(graph.NewResolver(c.Debug()), w.tokens, endpoint.HandlerOptions{})
			var reps []map[string]any
			for _, o := range dbtest.Must(c.Order.Query().All(dbtest.Sys)) {
				reps = append(reps, rep("Order", strconv.Itoa(o.ID)))
			}
			for _, m := range dbtest.Must(c.Material.Query().All(dbtest.Sys)) {
				reps = append(reps, rep("Material", strconv.Itoa(m.ID)), rep("Order", reps[len(reps)%5]["id"]))
			}
			doc := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Order { id price } ... on Material { id name } } }`
			mu.Lock()
			sent = nil
			mu.Unlock()
			a := entitiesOf(t, h, w.tokA, doc, reps)
			if a.Status != 200 || len(a.Data.Entities) != len(reps) {
				t.Fatalf("%d, %d entities for %d representations", a.Status, len(a.Data.Entities), len(reps))
			}
			mu.Lock()
			defer mu.Unlock()
			perTable := map[string]int{}
			for _, s := range sent {
				for _, table := range []string{"orders", "materials"} {
					if strings.Contains(s, `FROM "`+table+`"`) || strings.Contains(s, "FROM `"+table+"`") {
						perTable[table]++
					}
				}
			}
			if perTable["orders"] != 1 || perTable["materials"] != 1 || len(sent) != 2 {
				t.Errorf("statements per table %v (%d in all); want one for the orders and one for the materials:\n%s", perTable, len(sent), strings.Join(sent, "\n"))
			}
		})
	}
}

// TestServiceSDL: _service answers the checked-in subgraph SDL
// (graph/subgraph.graphql) to a token, and to anyone when introspection
// is public, as introspection is; otherwise an anonymous caller is
// refused UNAUTHENTICATED.
func TestServiceSDL(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		public := endpoint.NewHandler(graph.NewResolver(c), w.tokens, endpoint.HandlerOptions{PublicIntrospection: true})
		want, err := os.ReadFile("subgraph.graphql")
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			h     http.Handler
			token string
			code  string
		}{
			{"token", w.h, w.tokA, ""},
			{"anonymous, public introspection", public, "", ""},
			{"anonymous", w.h, "", "UNAUTHENTICATED"},
		} {
			body, _ := json.Marshal(map[string]any{"query": "{ _service { sdl } }"})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			r, _ := serveGQL(t, tc.h, req)
			var data struct {
				Service struct{ SDL string } `json:"_service"`
			}
			_ = json.Unmarshal(r.Data, &data)
			if r.code() != tc.code || (tc.code == "" && data.Service.SDL != string(want)) {
				t.Errorf("%s: code %q, %d bytes of SDL; want code %q and graph/subgraph.graphql (%d bytes)", tc.name, r.code(), len(data.Service.SDL), tc.code, len(want))
			}
		}
	})
}

// TestEntitiesTrustedOnly: under PERSISTED_ONLY a gateway's documents are
// held to the manifest like any client's, since the gateway forwards its
// caller's Open API token: an `_entities` document of the manifest is
// answered (by its text, as a gateway sends it, or by its hash) under the
// caller's tenancy; one the operator did not register, or `_service`, is
// refused with PERSISTED_QUERY_ONLY before it runs. A dashboard token
// (an operator reading the SDL) sends any document.
func TestEntitiesTrustedOnly(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		// As Hive Gateway prints its fetches to this subgraph.
		const registered = `query($representations:[_Any!]!){_entities(representations:$representations){__typename ...on Order{id price}}}`
		const unregistered = `query($representations:[_Any!]!){_entities(representations:$representations){__typename ...on Order{id status}}}`
		raw, _ := json.Marshal(map[string]string{persisted.Hash(registered): registered})
		manifest, err := persisted.ParseManifest(raw)
		if err != nil {
			t.Fatal(err)
		}
		h := w.persistedHandler(endpoint.HandlerOptions{Trusted: manifest, TrustedOnly: true})
		mine := c.Order.Query().Where(order.OwnerID(w.a.ID)).FirstIDX(dbtest.Sys)
		theirs := c.Order.Query().Where(order.OwnerID(w.b.ID)).FirstIDX(dbtest.Sys)
		vars := map[string]any{"representations": []map[string]any{rep("Order", strconv.Itoa(mine)), rep("Order", strconv.Itoa(theirs))}}
		for name, req := range map[string]map[string]any{
			"registered, by its text": {"query": registered, "variables": vars},
			"registered, by its hash": {"documentId": persisted.Hash(registered), "variables": vars},
		} {
			r := send(t, h, http.MethodPost, w.tokA, req)
			want := fmt.Sprintf(`{"_entities":[{"__typename":"Order","id":"%d","price":`, mine)
			if r.Status != http.StatusOK || !strings.HasPrefix(string(r.Data), want) || !strings.HasSuffix(string(r.Data), "},null]}") || r.code() != "NOT_FOUND" {
				t.Errorf("%s: %d %s %+v; want own order, and null with NOT_FOUND for the other owner's", name, r.Status, r.Data, r.Errors)
			}
		}
		for name, doc := range map[string]string{"unregistered _entities": unregistered, "_service": `{ _service { sdl } }`} {
			r := send(t, h, http.MethodPost, w.tokA, map[string]any{"query": doc, "variables": vars})
			wantError(t, name, r, http.StatusBadRequest, "PERSISTED_QUERY_ONLY")
		}
		own := map[string]any{"representations": []map[string]any{rep("Order", strconv.Itoa(mine))}}
		wantData(t, "a dashboard token's unregistered _entities", send(t, h, http.MethodPost, w.dashA, map[string]any{"query": unregistered, "variables": own}))
		wantData(t, "a dashboard token's _service", send(t, h, http.MethodPost, w.dashA, map[string]any{"query": `{ _service { sdl } }`}))
	})
}
