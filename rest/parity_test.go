package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/dbtest"
)

// parityList is a REST list and the GraphQL field behind it.
type parityList struct {
	path  string
	field string
	// args declares the GraphQL arguments, as "name: Type" pairs.
	args []string
	// sub is the selection of each item; nested ids are compared too.
	sub     string
	paged   bool
	queries []string
}

var pageArgs = []string{"page: Int", "perPage: Int"}

var parityLists = []parityList{
	{
		path: "/orders", field: "ordersPage", paged: true, sub: "id",
		args: append([]string{"orderBy: OrderOrderField", "order: OrderDirection", "configuratorId: ID", "startDate: Date", "endDate: Date"}, pageArgs...),
		queries: []string{
			"", "per_page=-1", "per_page=7&page=3", "order_by=price&order=asc", "order_by=status&order=DESC&per_page=-1",
			"configurator_id=2&per_page=-1", "start_date=2026-03-04&end_date=2026-03-06&order_by=id",
			"configurator_id=1&start_date=2026-03-02&per_page=4&page=2&order_by=updated_at&order=asc",
			"page=5", "configurator_id=3",
		},
	},
	{
		path: "/materials", field: "materialsPage", paged: true, sub: "id",
		args: append([]string{"orderBy: MaterialOrderField", "order: OrderDirection", "categoryId: ID", "textureId: ID"}, pageArgs...),
		queries: []string{
			"", "per_page=-1", "per_page=10&page=3", "order_by=name&order=asc", "category_id=2&per_page=-1&order_by=updated_at",
			"texture_id=5", "category_id=3&texture_id=9&order=asc", "order_by=id&order=desc&per_page=6&page=2",
		},
	},
	{
		path: "/materials-categories/list", field: "materialCategoryList", sub: "id",
		args:    []string{"orderBy: MaterialCategoryOrderField", "order: OrderDirection"},
		queries: []string{"", "order=asc", "order_by=title", "order_by=title&order=desc", "order_by=id&order=asc"},
	},
	{
		path: "/textures", field: "texturesPage", paged: true, sub: "id",
		args:    append([]string{"orderBy: TextureOrderField", "order: OrderDirection", "categoryId: ID"}, pageArgs...),
		queries: []string{"", "per_page=-1&order_by=name", "per_page=3&page=2", "category_id=1&order=asc", "order_by=id&per_page=4&page=3"},
	},
	{
		path: "/configurator-forms", field: "configuratorFormList", sub: "id",
		queries: []string{""},
	},
	{
		path: "/configurator-form-fields", field: "formFieldsPage", paged: true, sub: "id",
		args:    append([]string{"orderBy: FormFieldOrderField", "order: OrderDirection"}, pageArgs...),
		queries: []string{"", "order_by=position&order=asc", "order_by=title&per_page=3&page=2", "per_page=-1&order=asc", "order_by=id&per_page=2&page=4"},
	},
	{
		path: "/configurator-options", field: "configuratorOptionsPage", paged: true, sub: "id variations { id }",
		args: append([]string{"orderBy: ConfiguratorOptionOrderField", "order: OrderDirection"}, pageArgs...),
		queries: []string{
			"", "per_page=-1", "order_by=title&order=desc", "order_by=created_at&per_page=5&page=2",
			"order=desc&per_page=5&page=3", "order_by=position&order=asc&per_page=-1",
		},
	},
	{
		path: "/configurator-option-variations", field: "optionVariationList", sub: "id",
		args: []string{"configuratorOptionID: ID!"},
		queries: []string{
			"configurator_option_id=1", "configurator_option_id=6", "configurator_option_id=7",
			"configurator_option_id=8", "configurator_option_id=11", "configurator_option_id=13",
		},
	},
	{
		path: "/configurator-option-sets", field: "optionSetList", sub: "id options { id }",
		queries: []string{""},
	},
}

// gqlVars turns a REST query string into the GraphQL variables of the
// same meaning: page and per_page as Ints, order_by and order as enum
// names, ids and dates as strings, names in camelCase.
func gqlVars(t *testing.T, query string) map[string]any {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{}
	for k, vs := range q {
		name := camel(k)
		switch {
		case k == "page" || k == "per_page":
			n, err := strconv.Atoi(vs[0])
			if err != nil {
				t.Fatal(err)
			}
			vars[name] = n
		case k == "order_by" || k == "order":
			vars[name] = strings.ToUpper(vs[0])
		default:
			vars[name] = vs[0]
		}
	}
	return vars
}

// camel is the GraphQL name of a REST parameter: per_page is perPage,
// configurator_option_id is configuratorOptionID. The filters of the page
// queries are compared through their deprecated arguments, which keep
// the old spelling (configuratorId).
func camel(s string) string {
	switch s {
	case "configurator_id", "category_id", "texture_id":
		return strings.TrimSuffix(graph.FieldName(s), "ID") + "Id"
	}
	return graph.FieldName(s)
}

// gqlQuery builds the query of a list: every argument declared as a
// variable, so that absent ones are null.
func gqlQuery(l parityList) string {
	var decl, pass []string
	for _, a := range l.args {
		name, typ, _ := strings.Cut(a, ": ")
		decl = append(decl, "$"+name+": "+typ)
		pass = append(pass, name+": $"+name)
	}
	q := "query"
	if len(decl) > 0 {
		q += "(" + strings.Join(decl, ", ") + ")"
	}
	q += " { list: " + l.field
	if len(pass) > 0 {
		q += "(" + strings.Join(pass, ", ") + ")"
	}
	if l.paged {
		return q + " { data { " + l.sub + " } pagination { total lastPage currentPage perPage } } }"
	}
	return q + " { " + l.sub + " } }"
}

// idTree is an item reduced to its id and the ids of its nested lists
// (parameter_list / variations, option-set options), the same for the
// REST and GraphQL shapes.
func idTree(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var items []map[string]any
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("items: %v: %s", err, raw)
	}
	out := make([]string, len(items))
	for i, it := range items {
		s := idString(it["id"])
		for _, key := range []string{"parameter_list", "variations", "options"} {
			nested, ok := it[key].([]any)
			if !ok {
				continue
			}
			var ids []string
			for _, n := range nested {
				if m, ok := n.(map[string]any); ok {
					ids = append(ids, idString(m["id"]))
				} else {
					ids = append(ids, idString(n))
				}
			}
			s += "(" + strings.Join(ids, ",") + ")"
		}
		out[i] = s
	}
	return out
}

// idString renders a REST id (a JSON number) or a GraphQL ID (a string)
// alike.
func idString(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.Itoa(int(x))
	case string:
		return x
	}
	return "?"
}

// TestParity checks that each REST list and the GraphQL query with the
// same arguments return the same items in the same order, for owner 1
// and owner 2.
func TestParity(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, l := range parityLists {
			for _, query := range l.queries {
				t.Run(l.path+"?"+query, func(t *testing.T) {
					for _, token := range []string{f.owner1, f.owner2} {
						if status, _, _ := f.get(t, token, l.path+"?"+query); status == http.StatusNotFound {
							// Another owner's option: GraphQL refuses it too.
							_, codes := f.graphqlResult(t, token, gqlQuery(l), gqlVars(t, query))
							if len(codes) != 1 || !strings.HasPrefix(codes[0], "NOT_FOUND") {
								t.Errorf("REST %s?%s is 404; GraphQL errors %v", l.path, query, codes)
							}
							continue
						}
						var restBody json.RawMessage
						h := f.ok(t, token, l.path+"?"+query, &restBody)
						var gql struct{ List json.RawMessage }
						f.graphql(t, token, gqlQuery(l), gqlVars(t, query), &gql)

						restItems, gqlItems := restBody, gql.List
						switch {
						case l.path == "/orders":
							var env struct {
								Data       json.RawMessage
								Pagination struct {
									Total    int `json:"total"`
									LastPage int `json:"last_page"`
								}
							}
							json.Unmarshal(restBody, &env)
							restItems = env.Data
							var page struct {
								Data       json.RawMessage
								Pagination struct{ Total, LastPage int }
							}
							json.Unmarshal(gql.List, &page)
							gqlItems = page.Data
							if env.Pagination.Total != page.Pagination.Total || env.Pagination.LastPage != page.Pagination.LastPage {
								t.Errorf("pagination: REST %+v, GraphQL %+v", env.Pagination, page.Pagination)
							}
						case l.paged:
							var page struct {
								Data       json.RawMessage
								Pagination struct{ Total int }
							}
							json.Unmarshal(gql.List, &page)
							gqlItems = page.Data
							if got := h.Get("X-Total-Count"); got != strconv.Itoa(page.Pagination.Total) {
								t.Errorf("X-Total-Count %s; GraphQL total %d", got, page.Pagination.Total)
							}
						case l.path == "/configurator-option-sets":
							var env struct{ Data json.RawMessage }
							json.Unmarshal(restBody, &env)
							restItems = env.Data
						}
						rest, graph := idTree(t, restItems), idTree(t, gqlItems)
						if len(rest) == 0 && query == "" && token == f.owner1 {
							t.Errorf("REST %s is empty; the comparison is vacuous", l.path)
						}
						if strings.Join(rest, " ") != strings.Join(graph, " ") {
							t.Errorf("REST %s?%s = %v\nGraphQL %s = %v", l.path, query, rest, l.field, graph)
						}
					}
				})
			}
		}

		// The option types.
		var types struct {
			OptionTypes []string `json:"optionTypes"`
		}
		f.ok(t, f.owner1, "/configurator-options/types/list", &types)
		var gql struct{ ConfiguratorOptionTypes []string }
		f.graphql(t, f.owner1, "{ configuratorOptionTypes }", nil, &gql)
		if len(types.OptionTypes) == 0 || s(types.OptionTypes) != s(gql.ConfiguratorOptionTypes) {
			t.Errorf("option types: REST %v, GraphQL %v", types.OptionTypes, gql.ConfiguratorOptionTypes)
		}
	})
}
