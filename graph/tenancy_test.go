package graph_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// everything reads every root field and every edge, selecting __typename
// and id on every object, so that each object returned can be checked.
// Each root field is an operation of its own: all of them in one would be
// over the complexity limit (endpoint.MaxComplexity).
var everything = []string{
	`{ viewer { ownerID configurator { __typename id } } }`,
	`{ configurators(first: 10) { totalCount edges { node { __typename id
    orders(first: 100) { totalCount edges { node { __typename id } } }
    forms { __typename id fields { __typename id } }
    formFields { __typename id form { __typename id } }
    options { __typename id variations { __typename id } sets { __typename id } }
    optionSets { __typename id options { __typename id } } } } } }`,
	`{ orders(first: 100) { totalCount edges { node { __typename id configurator { __typename id } } } } }`,
	`{ ordersPage(perPage: -1) { pagination { total } data { __typename id configurator { __typename id } } } }`,
	`{ materials(first: 100) { totalCount edges { node { __typename id category { __typename id } texture { __typename id } } } } }`,
	`{ materialsPage(perPage: -1) { pagination { total } data { __typename id category { __typename id } texture { __typename id } } } }`,
	`{ materialCategories(first: 100) { totalCount edges { node { __typename id } } } }`,
	`{ materialCategoryList { __typename id materials { __typename id } textures { __typename id materials { __typename id } } } }`,
	`{ textures(first: 100) { totalCount edges { node { __typename id category { __typename id } } } } }`,
	`{ texturesPage(perPage: -1) { pagination { total } data { __typename id } } }`,
	`{ configuratorForms(first: 100) { totalCount edges { node { __typename id configurator { __typename id } } } } }`,
	`{ configuratorFormList { __typename id fields { __typename id } } }`,
	`{ formFields(first: 100) { totalCount edges { node { __typename id } } } }`,
	`{ formFieldsPage(perPage: -1) { pagination { total } data { __typename id } } }`,
	`{ configuratorOptions(first: 100) { totalCount edges { node { __typename id variations { __typename id option { __typename id } } } } } }`,
	`{ configuratorOptionsPage(perPage: -1) { pagination { total } data { __typename id variations { __typename id } } } }`,
	`{ optionVariations(first: 100) { totalCount edges { node { __typename id } } } }`,
	`{ optionSets(first: 100) { totalCount edges { node { __typename id options { __typename id } } } } }`,
	`{ optionSetList { __typename id options { __typename id } } }`,
}

// collect walks a JSON value and records every object that has __typename
// and id, as "Type:id".
func collect(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if tn, ok := x["__typename"].(string); ok {
			if id, ok := x["id"].(string); ok {
				into[tn+":"+id] = true
			}
		}
		for _, e := range x {
			collect(e, into)
		}
	case []any:
		for _, e := range x {
			collect(e, into)
		}
	}
}

// owned returns "Type:id" of every row of every graph type per owner id.
func owned(t *testing.T, c *ent.Client) map[string]int {
	ctx := dbtest.Sys
	out := map[string]int{}
	add := func(typ string, id, owner int) { out[typ+":"+strconv.Itoa(id)] = owner }
	for _, x := range dbtest.Must(c.Configurator.Query().All(ctx)) {
		add("Configurator", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.Order.Query().All(ctx)) {
		add("Order", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.Material.Query().All(ctx)) {
		add("Material", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.MaterialCategory.Query().All(ctx)) {
		add("MaterialCategory", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.Texture.Query().All(ctx)) {
		add("Texture", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.ConfiguratorForm.Query().All(ctx)) {
		add("ConfiguratorForm", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.FormField.Query().All(ctx)) {
		add("FormField", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.ConfiguratorOption.Query().All(ctx)) {
		add("ConfiguratorOption", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.OptionVariation.Query().All(ctx)) {
		add("OptionVariation", x.ID, x.OwnerID)
	}
	for _, x := range dbtest.Must(c.OptionSet.Query().All(ctx)) {
		add("OptionSet", x.ID, x.OwnerID)
	}
	return out
}

func TestTenancyEveryQuery(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		owners := owned(t, c)
		for _, tc := range []struct {
			name  string
			token string
			owner int
		}{
			{"owner A open api", w.tokA, w.a.ID},
			{"owner A dashboard", w.dashA, w.a.ID},
			{"owner B open api", w.tokB, w.b.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				seen := map[string]bool{}
				for _, q := range everything {
					var data any
					w.ok(t, tc.token, q, nil, &data)
					collect(data, seen)
				}
				want := 0
				for key, o := range owners {
					if o == tc.owner {
						want++
						if !seen[key] {
							t.Errorf("%s of the caller's owner is missing from the graph", key)
						}
					}
				}
				for key := range seen {
					if o, ok := owners[key]; !ok || o != tc.owner {
						t.Errorf("%s (owner %d) leaked to owner %d", key, o, tc.owner)
					}
				}
				if len(seen) != want {
					t.Errorf("saw %d objects; want %d", len(seen), want)
				}
			})
		}
	})
}

// TestTenancyByID reads each of owner A's objects through its typed root
// field with B's token: every one is NOT_FOUND, exactly like a missing id.
func TestTenancyByID(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		owners := owned(t, c)
		fields := map[string]string{
			"Order": "order", "Material": "material", "Texture": "texture",
			"ConfiguratorForm": "configuratorForm", "FormField": "formField",
			"ConfiguratorOption": "configuratorOption",
		}
		checked := 0
		for key, owner := range owners {
			typ, id, _ := strings.Cut(key, ":")
			field, ok := fields[typ]
			if !ok {
				continue
			}
			q := fmt.Sprintf(`query($id: ID!) { x: %s(id: $id) { id } }`, field)
			for _, tok := range []struct {
				token string
				owner int
			}{{w.tokA, w.a.ID}, {w.tokB, w.b.ID}} {
				r := w.query(t, tok.token, q, map[string]any{"id": id})
				if tok.owner == owner {
					if len(r.Errors) > 0 {
						t.Errorf("%s read by its owner: %+v", key, r.Errors)
					}
					continue
				}
				checked++
				if r.code() != "NOT_FOUND" {
					t.Errorf("%s read by owner %d: code %q; want NOT_FOUND", key, tok.owner, r.code())
				}
				var data map[string]any
				json.Unmarshal(r.Data, &data)
				if data != nil && data["x"] != nil {
					t.Errorf("%s read by owner %d returned data %v", key, tok.owner, data["x"])
				}
			}
		}
		if checked < 20 {
			t.Fatalf("checked only %d foreign reads", checked)
		}
		// The variations of another owner's option are not found either.
		var optB int
		for key, o := range owners {
			if id, ok := strings.CutPrefix(key, "ConfiguratorOption:"); ok && o == w.b.ID {
				optB, _ = strconv.Atoi(id)
			}
		}
		r := w.query(t, w.tokA, `query($id: ID!) { optionVariationList(configuratorOptionID: $id) { id } }`, map[string]any{"id": optB})
		if r.code() != "NOT_FOUND" {
			t.Errorf("variations of B's option %d read by A: code %q; want NOT_FOUND", optB, r.code())
		}
	})
}
