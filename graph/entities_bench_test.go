package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// BenchmarkEntities measures _entities of 100 Order representations, as
// a gateway sends it, against a 100-row ordersPage with the same fields,
// on each backend: cpu-ns/op is this process's CPU time per request
// (the service's; on PostgreSQL the database's own is apart). The issue's
// bar is _entities at most 2x the page (bench/entities.sh prints the ratio).
func BenchmarkEntities(b *testing.B) {
	for _, be := range dbtest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			c := dbtest.Open(b, be.URL(b))
			A := dbtest.NewTenant(b, c, "A", "Sofa")
			var reps []map[string]any
			for i := range 100 {
				o := dbtest.Must(c.Order.Create().SetOwnerID(A.ID).SetConfiguratorID(A.Confs[0].ID).
					SetPrice(float64(100 + i)).SetStatus("new").SetCustomerDetails(json.RawMessage(fmt.Sprintf(`{"name":"customer %d"}`, i))).
					SetConfiguratorSummary(json.RawMessage(`{"Color":"Red"}`)).SetCreatedAt(day0.Add(time.Duration(i) * time.Hour)).Save(dbtest.Sys))
				reps = append(reps, map[string]any{"__typename": "Order", "id": strconv.Itoa(o.ID)})
			}
			tokens := dbtest.Tokens(c)
			token, _ := dbtest.OpenAPI(b, tokens, A.Confs[0].ID)
			h := endpoint.NewHandler(graph.NewResolver(c), tokens, endpoint.HandlerOptions{})
			for _, d := range []struct {
				name, query string
				vars        map[string]any
			}{
				{"entities100", `query($r: [_Any!]!) { _entities(representations: $r) { ... on Order { id price status createdAt customerDetails } } }`, map[string]any{"r": reps}},
				{"ordersPage100", `{ ordersPage(perPage: 100) { data { id price status createdAt customerDetails } } }`, nil},
			} {
				b.Run(d.name, func(b *testing.B) {
					body, _ := json.Marshal(map[string]any{"query": d.query, "variables": d.vars})
					b.ReportAllocs()
					start := testkit.CPUTime(b)
					for b.Loop() {
						req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer "+token)
						w := httptest.NewRecorder()
						h.ServeHTTP(w, req)
						if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) || w.Body.Len() < 100*40 {
							b.Fatalf("%s = %d: %.300s", d.name, w.Code, w.Body)
						}
					}
					b.ReportMetric(float64(testkit.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}
