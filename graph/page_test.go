package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/configuratorform"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/formfield"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/optionset"
	"github.com/configurator/catalogue/ent/optionvariation"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

type pagination struct {
	CurrentPage, PerPage, Total, LastPage int
}

type idPage struct {
	P struct {
		Data       []struct{ ID string }
		Pagination pagination
	}
}

func (p idPage) ids() []string {
	var out []string
	for _, d := range p.P.Data {
		out = append(out, d.ID)
	}
	return out
}

func TestPageArithmetic(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c) // owner A has 23 materials
		q := `query($page: Int, $perPage: Int) { p: materialsPage(page: $page, perPage: $perPage, orderBy: ID, order: ASC) {
			data { id } pagination { currentPage perPage total lastPage } } }`
		var all []string
		for _, tc := range []struct {
			page, perPage any
			n             int
			want          pagination
		}{
			{nil, nil, 15, pagination{1, 15, 23, 2}},
			{2, nil, 8, pagination{2, 15, 23, 2}},
			{1, 10, 10, pagination{1, 10, 23, 3}},
			{2, 10, 10, pagination{2, 10, 23, 3}},
			{3, 10, 3, pagination{3, 10, 23, 3}},
			{4, 10, 0, pagination{4, 10, 23, 3}},
			{1, 23, 23, pagination{1, 23, 23, 1}},
			{1, 100, 23, pagination{1, 100, 23, 1}},
			{1, -1, 23, pagination{1, -1, 23, 1}},
			{1, 1, 1, pagination{1, 1, 23, 23}},
		} {
			t.Run(fmt.Sprintf("page=%v perPage=%v", tc.page, tc.perPage), func(t *testing.T) {
				var p idPage
				w.ok(t, w.tokA, q, map[string]any{"page": tc.page, "perPage": tc.perPage}, &p)
				if len(p.P.Data) != tc.n || p.P.Pagination != tc.want {
					t.Fatalf("got %d rows %+v; want %d %+v", len(p.P.Data), p.P.Pagination, tc.n, tc.want)
				}
				if tc.perPage == -1 {
					all = p.ids()
				}
			})
		}
		// The total of a filtered list, counted in the page's statement or,
		// for an empty page, on its own.
		fq := `query($page: Int, $name: String) { p: materialsPage(page: $page, perPage: 2, where: {nameHasPrefix: $name}) {
			data { id } pagination { currentPage perPage total lastPage } } }`
		for _, tc := range []struct {
			page int
			name string
			n    int
			want pagination
		}{
			{1, "no such material", 0, pagination{1, 2, 0, 1}},
			{3, "no such material", 0, pagination{3, 2, 0, 1}},
			{1, "mat 1", 2, pagination{1, 2, 10, 5}},
			{5, "mat 1", 2, pagination{5, 2, 10, 5}},
			{6, "mat 1", 0, pagination{6, 2, 10, 5}},
			{2, "mat 2", 1, pagination{2, 2, 3, 2}},
		} {
			var p idPage
			w.ok(t, w.tokA, fq, map[string]any{"page": tc.page, "name": tc.name}, &p)
			if len(p.P.Data) != tc.n || p.P.Pagination != tc.want {
				t.Errorf("%q page %d: got %d rows %+v; want %d %+v", tc.name, tc.page, len(p.P.Data), p.P.Pagination, tc.n, tc.want)
			}
		}

		// Pages of 10 concatenate to the whole list, in order, without overlap.
		var paged []string
		for page := 1; page <= 3; page++ {
			var p idPage
			w.ok(t, w.tokA, q, map[string]any{"page": page, "perPage": 10}, &p)
			paged = append(paged, p.ids()...)
		}
		if !slices.Equal(paged, all) {
			t.Errorf("pages of 10 = %v; want %v", paged, all)
		}

		for _, tc := range []struct {
			page, perPage any
			field         string
		}{
			{0, nil, "page"}, {-1, nil, "page"}, {nil, 0, "perPage"}, {nil, -2, "perPage"},
			{nil, valid.MaxPerPage + 1, "perPage"},
		} {
			r := w.query(t, w.tokA, q, map[string]any{"page": tc.page, "perPage": tc.perPage})
			if r.code() != "BAD_REQUEST" || r.Errors[0].Extensions["field"] != tc.field {
				t.Errorf("page=%v perPage=%v: %+v; want BAD_REQUEST naming %s", tc.page, tc.perPage, r.Errors, tc.field)
			}
		}
		// A value of the wrong type never reaches a resolver.
		r := w.query(t, w.tokA, `{ materialsPage(page: "x") { data { id } } }`, nil)
		if r.code() != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("page \"x\": %+v; want GRAPHQL_VALIDATION_FAILED", r.Errors)
		}
		r = w.query(t, w.tokA, `{ materialsPage(orderBy: owner_id) { data { id } } }`, nil)
		if r.code() != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("orderBy owner_id: %+v; want GRAPHQL_VALIDATION_FAILED", r.Errors)
		}
	})
}

func TestOrderingAndFilters(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		type orderRow struct {
			ID             string
			Price          float64
			CreatedAt      string
			ConfiguratorID string
			Configurator   struct{ ID, Name string }
		}
		type ordersResp struct {
			P struct {
				Data       []orderRow
				Pagination pagination
			}
		}
		q := `query($orderBy: OrderOrderField, $order: OrderDirection, $where: OrderWhereInput, $start: Date, $end: Date) {
			p: ordersPage(perPage: -1, orderBy: $orderBy, order: $order, where: $where, startDate: $start, endDate: $end) {
				data { id price createdAt configuratorID configurator { id name } } pagination { total } } }`
		get := func(vars map[string]any) ordersResp {
			var r ordersResp
			w.ok(t, w.tokA, q, vars, &r)
			return r
		}
		// Default: newest first.
		def := get(nil)
		if len(def.P.Data) != 12 || !sort.SliceIsSorted(def.P.Data, func(i, j int) bool { return def.P.Data[i].CreatedAt > def.P.Data[j].CreatedAt }) {
			t.Errorf("default order is not created_at desc: %+v", def.P.Data)
		}
		for _, dir := range []string{"ASC", "DESC"} {
			r := get(map[string]any{"orderBy": "PRICE", "order": dir})
			ok := sort.SliceIsSorted(r.P.Data, func(i, j int) bool {
				if dir == "ASC" {
					return r.P.Data[i].Price < r.P.Data[j].Price
				}
				return r.P.Data[i].Price > r.P.Data[j].Price
			})
			if !ok {
				t.Errorf("orderBy PRICE %s not sorted: %+v", dir, r.P.Data)
			}
		}
		a2 := strconv.Itoa(w.a2.ID)
		// The total of one configurator's orders comes from order_counts
		// (query.OrderTotal); with a date filter of whole UTC days too it is a sum of
		// order_date_counts; other filters are counted.
		for _, vars := range []map[string]any{
			{"where": map[string]any{"configuratorID": a2}},
			{"where": map[string]any{"configuratorID": a2}, "start": "2026-03-01"},
		} {
			r := get(vars)
			if r.P.Pagination.Total != 4 || len(r.P.Data) != 4 {
				t.Errorf("%v: %d orders, total %d; want 4", vars, len(r.P.Data), r.P.Pagination.Total)
			}
			for _, o := range r.P.Data {
				if o.ConfiguratorID != a2 || o.Configurator.ID != a2 || o.Configurator.Name != "Chair" {
					t.Errorf("configuratorID filter returned %+v", o)
				}
			}
		}
		// Orders are on day0+0 .. day0+11, one a day; bounds are inclusive days.
		for _, tc := range []struct {
			start, end any
			want       int
		}{
			{"2026-03-01", "2026-03-01", 1},
			{"2026-03-02", "2026-03-04", 3},
			{"2026-03-10", nil, 3},
			{nil, "2026-03-03", 3},
			{"2026-03-05T23:00:00+02:00", "2026-03-05", 1}, // RFC 3339 reduced to its UTC date
			{"2027-01-01", nil, 0},
		} {
			r := get(map[string]any{"start": tc.start, "end": tc.end})
			if r.P.Pagination.Total != tc.want {
				t.Errorf("start %v end %v: %d orders; want %d", tc.start, tc.end, r.P.Pagination.Total, tc.want)
			}
		}
		for _, vars := range []map[string]any{
			{"start": "2026-03-05", "end": "2026-03-04"},
			{"start": "yesterday"},
			{"end": "2026-13-01"},
		} {
			if r := w.query(t, w.tokA, q, vars); r.code() != "BAD_REQUEST" {
				t.Errorf("%v: %+v; want BAD_REQUEST", vars, r.Errors)
			}
		}

		// Materials: category and texture filters and name ordering.
		var cats struct{ MaterialCategoryList []struct{ ID string } }
		w.ok(t, w.tokA, `{ materialCategoryList(orderBy: ID, order: ASC) { id } }`, nil, &cats)
		if len(cats.MaterialCategoryList) != 3 {
			t.Fatalf("categories: %+v", cats)
		}
		type mats struct {
			P struct {
				Data []struct {
					ID, Name   string
					CategoryID *string
					TextureID  *string
				}
				Pagination pagination
			}
		}
		var m mats
		w.ok(t, w.tokA, `query($c: ID) { p: materialsPage(perPage: -1, where: {categoryID: $c}, orderBy: NAME, order: DESC) {
			data { id name categoryID textureID } pagination { total } } }`, map[string]any{"c": cats.MaterialCategoryList[1].ID}, &m)
		if m.P.Pagination.Total != 8 {
			t.Errorf("category filter: %d materials; want 8", m.P.Pagination.Total)
		}
		for i, d := range m.P.Data {
			if *d.CategoryID != cats.MaterialCategoryList[1].ID {
				t.Errorf("category filter returned %+v", d)
			}
			if i > 0 && m.P.Data[i-1].Name < d.Name {
				t.Errorf("NAME DESC out of order at %d", i)
			}
		}
		var tex struct {
			TexturesPage struct{ Data []struct{ ID string } }
		}
		w.ok(t, w.tokA, `{ texturesPage(perPage: 1, orderBy: ID, order: ASC) { data { id } } }`, nil, &tex)
		w.ok(t, w.tokA, `query($t: ID) { p: materialsPage(perPage: -1, where: {textureID: $t}) { data { id textureID } pagination { total } } }`,
			map[string]any{"t": tex.TexturesPage.Data[0].ID}, &m)
		if m.P.Pagination.Total != 4 {
			t.Errorf("texture filter: %d materials; want 4", m.P.Pagination.Total)
		}

		// Options default to their position, variations to theirs.
		var opts struct {
			ConfiguratorOptionsPage struct {
				Data []struct {
					Position   int
					Variations []struct{ Position int }
				}
			}
		}
		w.ok(t, w.tokA, `{ configuratorOptionsPage(perPage: -1) { data { position variations { position } } } }`, nil, &opts)
		for i, o := range opts.ConfiguratorOptionsPage.Data {
			if i > 0 && opts.ConfiguratorOptionsPage.Data[i-1].Position > o.Position {
				t.Errorf("options not in position order: %+v", opts)
			}
			for j := 1; j < len(o.Variations); j++ {
				if o.Variations[j-1].Position > o.Variations[j].Position {
					t.Errorf("variations not in position order: %+v", o.Variations)
				}
			}
		}

		// Relay: where, orderBy, totalCount and cursors.
		var rel struct {
			Orders struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
				PageInfo   struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		rq := `query($after: Cursor) { orders(first: 5, after: $after, orderBy: {field: PRICE, direction: DESC}, where: {priceGTE: 200}) {
			totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }`
		w.ok(t, w.tokA, rq, nil, &rel)
		n := 0
		for _, o := range def.P.Data {
			if o.Price >= 200 {
				n++
			}
		}
		if rel.Orders.TotalCount != n || len(rel.Orders.Edges) != min(5, n) || rel.Orders.PageInfo.HasNextPage != (n > 5) {
			t.Errorf("relay where priceGTE 200: %+v; want total %d", rel.Orders, n)
		}
		if r := w.query(t, w.tokA, `{ orders(first: 100000) { totalCount } }`, nil); r.code() != "BAD_REQUEST" {
			t.Errorf("first: 100000: %+v; want BAD_REQUEST", r.Errors)
		}
	})
}

// TestSortColumns checks the convention sortOf relies on: each value of
// every order-field enum, lower-cased, is a column of its table.
func TestSortColumns(t *testing.T) {
	valid := map[string]func(string) bool{
		"OrderOrderField": order.ValidColumn, "MaterialOrderField": material.ValidColumn,
		"MaterialCategoryOrderField": materialcategory.ValidColumn, "TextureOrderField": texture.ValidColumn,
		"FormFieldOrderField": formfield.ValidColumn, "ConfiguratorOptionOrderField": configuratoroption.ValidColumn,
		"ConfiguratorFormOrderField": configuratorform.ValidColumn, "OptionVariationOrderField": optionvariation.ValidColumn,
		"OptionSetOrderField": optionset.ValidColumn, "ConfiguratorOrderField": configurator.ValidColumn,
	}
	c := dbtest.Open(t, dbtest.SQLite(t))
	w := &world{h: endpoint.NewHandler(graph.NewResolver(c), nil, endpoint.HandlerOptions{PublicIntrospection: true})}
	var schema struct {
		Schema struct {
			Types []struct {
				Name       string
				EnumValues []struct{ Name string }
			}
		} `json:"__schema"`
	}
	w.ok(t, "", `{ __schema { types { name enumValues { name } } } }`, nil, &schema)
	seen := 0
	for _, typ := range schema.Schema.Types {
		if !strings.HasSuffix(typ.Name, "OrderField") {
			continue
		}
		ok, known := valid[typ.Name]
		if !known {
			t.Errorf("order-field enum %s is not checked here", typ.Name)
			continue
		}
		seen++
		for _, v := range typ.EnumValues {
			if !ok(strings.ToLower(v.Name)) {
				t.Errorf("%s.%s is not a column (%s)", typ.Name, v.Name, strings.ToLower(v.Name))
			}
		}
	}
	if seen != len(valid) {
		t.Errorf("checked %d order-field enums; want %d", seen, len(valid))
	}
}

// TestEagerLoading counts SQL statements: a page of rows with the edges
// REST shows costs the same few queries whatever the number of rows.
func TestEagerLoading(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			var n atomic.Int64
			c := dbtest.Open(t, b.URL(t), ent.Log(func(...any) { n.Add(1) }))
			w := newWorld(t, c)
			w.h = endpoint.NewHandler(graph.NewResolver(c.Debug()), w.tokens, endpoint.HandlerOptions{})
			for _, tc := range []struct {
				name  string
				query string
				max   int64
			}{
				{"ordersPage with configurator", `{ ordersPage(perPage: -1) { data { id configurator { id name } } } }`, 3},
				{"materialsPage with category and texture", `{ materialsPage(perPage: -1) { data { id category { id } texture { id } } } }`, 4},
				{"configuratorOptionsPage with variations", `{ configuratorOptionsPage(perPage: -1) { data { id variations { id } } } }`, 3},
				{"optionSetList with options", `{ optionSetList { id options { id } } }`, 2},
				{"relay orders with configurator", `{ orders(first: 50) { totalCount edges { node { id configurator { id } } } } }`, 3},
				{"relay materials with category", `{ materials(first: 50) { edges { node { id category { id } texture { id } } } } }`, 3},
			} {
				t.Run(tc.name, func(t *testing.T) {
					n.Store(0)
					var data json.RawMessage
					w.ok(t, w.tokA, tc.query, nil, &data)
					// The token lookup runs outside the debug client and
					// is not counted.
					if got := n.Load(); got > tc.max || got == 0 {
						t.Errorf("%d statements; want 1..%d", got, tc.max)
					}
				})
			}
		})
	}
}

// TestPresenting holds reads to what their caller states: a root given
// graph.V1, as REST's is, counts every page's total and loads the edges
// the v1 shapes show; the GraphQL root called outside an operation loads
// neither, since no read takes a missing selection for REST.
func TestPresenting(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctx := viewer.NewContext(context.Background(), &viewer.Viewer{
			OwnerID: w.a.ID, Kind: viewer.KindOpenAPI, ConfiguratorID: w.a1.ID, TokenID: w.recA.ID,
		})
		root := graph.NewResolver(c)
		for _, tc := range []struct {
			name string
			res  *graph.Resolver
			v1   bool
		}{{"V1", root.Presenting(graph.V1), true}, {"no selection", root, false}} {
			t.Run(tc.name, func(t *testing.T) {
				orders := dbtest.Must(tc.res.Query().OrdersPage(ctx, model.OrdersPageArgs{}))
				if counted := orders.Pagination.Total > 0; counted != tc.v1 || len(orders.Data) == 0 {
					t.Errorf("%d orders, total %d; counted %v, want %v", len(orders.Data), orders.Pagination.Total, counted, tc.v1)
				}
				if named := query.ConfiguratorName(orders.Data[0]) != ""; named != tc.v1 {
					t.Errorf("configurator name loaded %v; want %v", named, tc.v1)
				}
				order := dbtest.Must(tc.res.Query().Order(ctx, orders.Data[0].ID))
				if named := query.ConfiguratorName(order) != ""; named != tc.v1 {
					t.Errorf("order by id: configurator name loaded %v; want %v", named, tc.v1)
				}
				opts := dbtest.Must(tc.res.Query().ConfiguratorOptionsPage(ctx, model.ConfiguratorOptionsPageArgs{}))
				if loaded := len(opts.Data) > 0 && len(opts.Data[0].Edges.Variations) > 0; loaded != tc.v1 {
					t.Errorf("option variations loaded %v; want %v", loaded, tc.v1)
				}
				sets := dbtest.Must(tc.res.Query().OptionSetList(ctx))
				if loaded := len(sets) > 0 && len(sets[0].Edges.Options) > 0; loaded != tc.v1 {
					t.Errorf("option set options loaded %v; want %v", loaded, tc.v1)
				}
			})
		}
	})
}
