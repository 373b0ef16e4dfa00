package demo

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	"github.com/configurator/catalogue/ent/owner"
	"github.com/configurator/catalogue/ent/schema"
	"github.com/configurator/catalogue/ent/setting"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/viewer"
)

// sys is the system context the tests read with: every row, no tenancy.
func sys() context.Context {
	return dbtest.Sys
}

func seed(t *testing.T, c *ent.Client) *Summary {
	t.Helper()
	sum, err := Seed(context.Background(), c)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	return sum
}

// wantOwners is the owners part of the summary on a fresh database.
func wantOwners() []OwnerSummary {
	return []OwnerSummary{
		{ID: 1, Name: demoOwners[0].name, Configurators: []int{1, 2}},
		{ID: 2, Name: demoOwners[1].name, Configurators: []int{3}},
	}
}

func TestSeedSummary(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		sum := seed(t, c)
		if !sum.Created {
			t.Error("Created = false on a fresh database")
		}
		if !reflect.DeepEqual(sum.Owners, wantOwners()) {
			t.Errorf("owners = %+v, want %+v", sum.Owners, wantOwners())
		}
		want := Summary{
			Owners:             wantOwners(),
			MaterialCategories: 3, Materials: 25, Textures: 10,
			Orders:  32,        // 30 of owner 1, 2 of owner 2
			Options: 9 + 3 + 2, // chair, sneaker, bike
			Forms:   3, OptionSets: 4,
			Variations: sum.Variations, FormFields: sum.FormFields, Created: true,
		}
		if !reflect.DeepEqual(*sum, want) {
			t.Errorf("summary = %+v, want %+v", *sum, want)
		}
		if sum.Variations < 2*sum.Options || sum.Variations > 4*sum.Options {
			t.Errorf("variations = %d for %d options, want 2-4 each", sum.Variations, sum.Options)
		}
		if sum.FormFields < 3*sum.Forms || sum.FormFields > 5*sum.Forms {
			t.Errorf("form fields = %d for %d forms, want 3-5 each", sum.FormFields, sum.Forms)
		}
		b, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("summary: %s", b)
		prefix := `{"owners":[{"id":1,"name":"` + demoOwners[0].name + `","configurators":[1,2]},` +
			`{"id":2,"name":"` + demoOwners[1].name + `","configurators":[3]}],"material_categories":3,`
		if !strings.HasPrefix(string(b), prefix) || !strings.HasSuffix(string(b), `"created":true}`) {
			t.Errorf("JSON = %s, want it to start with %s", b, prefix)
		}
	})
}

func TestSeedCatalogue(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := sys()
		if n := must(c.Owner.Query().Count(ctx)).of(t); n < 2 {
			t.Errorf("owners = %d, want at least 2", n)
		}
		if n := must(c.Configurator.Query().Count(ctx)).of(t); n != 3 {
			t.Errorf("configurators = %d, want 3", n)
		}
		o1 := must(c.Owner.Get(ctx, 1)).of(t)
		if !o1.CreatedAt.Equal(setupStart) || !o1.UpdatedAt.Equal(setupStart) {
			t.Errorf("owner 1 times = %v/%v, want the fixed %v", o1.CreatedAt, o1.UpdatedAt, setupStart)
		}

		cats := must(c.MaterialCategory.Query().Order(ent.Asc(materialcategory.FieldID)).All(ctx)).of(t)
		if len(cats) != 3 {
			t.Fatalf("categories = %d, want 3", len(cats))
		}
		catIDs := map[int]bool{}
		for _, cat := range cats {
			if cat.OwnerID != 1 {
				t.Errorf("category %d owner = %d, want 1", cat.ID, cat.OwnerID)
			}
			catIDs[cat.ID] = true
		}

		textures := must(c.Texture.Query().Order(ent.Asc(texture.FieldID)).All(ctx)).of(t)
		if len(textures) != 10 {
			t.Errorf("textures = %d, want 10", len(textures))
		}
		noBump := 0
		for _, tx := range textures {
			if tx.OwnerID != 1 || tx.CategoryID == nil || !catIDs[*tx.CategoryID] {
				t.Errorf("texture %d: owner %d, category %v: want owner 1 and a demo category", tx.ID, tx.OwnerID, tx.CategoryID)
			}
			for _, f := range []*string{tx.TextureFile, tx.TextureThumbnail50, tx.TextureThumbnail100} {
				if f == nil || !strings.HasPrefix(*f, assetBase+"textures/") {
					t.Errorf("texture %d file %v, want "+assetBase+"textures/...", tx.ID, f)
				}
			}
			if tx.BumpFile == nil {
				noBump++
			} else if !strings.HasPrefix(*tx.BumpFile, assetBase+"textures/") {
				t.Errorf("texture %d bump file %q", tx.ID, *tx.BumpFile)
			}
		}
		if noBump == 0 || noBump == len(textures) {
			t.Errorf("%d of %d textures lack a bump file, want some", noBump, len(textures))
		}

		mats := must(c.Material.Query().Order(ent.Asc(material.FieldID)).All(ctx)).of(t)
		if len(mats) != 25 {
			t.Errorf("materials = %d, want 25", len(mats))
		}
		hex := regexp.MustCompile(`^#[0-9A-F]{6}$`)
		types := map[string]bool{"flat": true, "glossy": true, "matte": true, "metallic": true}
		perCat := map[int]int{}
		inactive, noTexture := 0, 0
		for _, m := range mats {
			if m.OwnerID != 1 {
				t.Errorf("material %d owner = %d, want 1", m.ID, m.OwnerID)
			}
			if m.CategoryID == nil || !catIDs[*m.CategoryID] {
				t.Errorf("material %d category = %v, want a demo category", m.ID, m.CategoryID)
			} else {
				perCat[*m.CategoryID]++
			}
			if !hex.MatchString(m.Color) {
				t.Errorf("material %d color %q, want #RRGGBB in upper case", m.ID, m.Color)
			}
			if !types[m.MaterialType] {
				t.Errorf("material %d type %q", m.ID, m.MaterialType)
			}
			if m.Opacity < 0 || m.Opacity > 1 || m.Surface == "" || m.CreatedBy == "" {
				t.Errorf("material %d: opacity %v, surface %q, created_by %q", m.ID, m.Opacity, m.Surface, m.CreatedBy)
			}
			if m.MaterialFile == nil || !strings.HasPrefix(*m.MaterialFile, assetBase+"materials/") {
				t.Errorf("material %d file %v", m.ID, m.MaterialFile)
			}
			if !m.Status {
				inactive++
			}
			if m.TextureID == nil {
				noTexture++
			}
		}
		if len(perCat) != 3 {
			t.Errorf("materials spread over %d categories, want 3", len(perCat))
		}
		if inactive == 0 || inactive == len(mats) || noTexture == 0 || noTexture == len(mats) {
			t.Errorf("%d inactive, %d without texture of %d: want some of each", inactive, noTexture, len(mats))
		}
	})
}

func TestSeedOrders(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := sys()
		orders := must(c.Order.Query().Where(order.OwnerID(1)).Order(ent.Asc(order.FieldID)).All(ctx)).of(t)
		if len(orders) != 30 {
			t.Fatalf("orders of owner 1 = %d, want 30", len(orders))
		}
		perConf := map[int]int{}
		days := map[string]bool{}
		times := map[time.Time]bool{}
		statuses := map[string]bool{}
		prices := map[float64]bool{}
		var snapshots, printMaps, invoices, storefronts int
		for _, o := range orders {
			perConf[o.ConfiguratorID]++
			days[o.CreatedAt.UTC().Format(time.DateOnly)] = true
			times[o.CreatedAt.UTC()] = true
			statuses[o.Status] = true
			prices[o.Price] = true
			if o.Price <= 0 || math.Abs(o.Price*100-math.Round(o.Price*100)) > 1e-6 {
				t.Errorf("order %d price %v, want a positive amount with two decimals", o.ID, o.Price)
			}
			var details map[string]any
			json.Unmarshal(o.CustomerDetails, &details)
			for _, k := range []string{"name", "email", "phone"} {
				if s, _ := details[k].(string); s == "" {
					t.Errorf("order %d customer_details lacks %s: %v", o.ID, k, o.CustomerDetails)
				}
			}
			if len(o.ConfiguratorSummary) == 0 {
				t.Errorf("order %d has an empty configurator_summary", o.ID)
			}
			if o.ConfiguratorSnapshot != nil {
				snapshots++
				if !strings.HasPrefix(*o.ConfiguratorSnapshot, assetBase) {
					t.Errorf("order %d snapshot %q", o.ID, *o.ConfiguratorSnapshot)
				}
			}
			if len(o.ConfiguratorPrintMap) > 0 {
				printMaps++
			}
			if o.InvoiceURL != nil {
				invoices++
			}
			if o.OrderStorefront != nil {
				storefronts++
			}
			if o.UpdatedAt.Before(o.CreatedAt) {
				t.Errorf("order %d updated before it was created", o.ID)
			}
		}
		if want := map[int]int{1: 18, 2: 12}; !reflect.DeepEqual(perConf, want) {
			t.Errorf("orders per configurator = %v, want %v", perConf, want)
		}
		if len(days) < 5 {
			t.Errorf("orders on %d days, want at least 5", len(days))
		}
		if len(times) != len(orders) {
			t.Errorf("%d distinct creation times for %d orders", len(times), len(orders))
		}
		if len(prices) < 10 {
			t.Errorf("only %d distinct prices over %d orders", len(prices), len(orders))
		}
		for _, s := range []string{"new", "paid", "shipped", "cancelled"} {
			if !statuses[s] {
				t.Errorf("no order has status %q", s)
			}
		}
		for name, n := range map[string]int{"snapshot": snapshots, "print map": printMaps, "invoice": invoices, "storefront": storefronts} {
			if n == 0 || n == len(orders) {
				t.Errorf("%d of %d orders have a %s, want some", n, len(orders), name)
			}
		}
		// Ids follow creation times, as if the orders came in one by one.
		all := must(c.Order.Query().Order(ent.Asc(order.FieldID)).All(ctx)).of(t)
		for i := 1; i < len(all); i++ {
			if !all[i].CreatedAt.After(all[i-1].CreatedAt) {
				t.Errorf("order %d created at %v, not after order %d", all[i].ID, all[i].CreatedAt, all[i-1].ID)
			}
		}
		if n := must(c.Order.Query().Where(order.OwnerID(2), order.ConfiguratorID(3)).Count(ctx)).of(t); n != 2 {
			t.Errorf("orders of owner 2 on configurator 3 = %d, want 2", n)
		}
	})
}

// selectLike option types let the customer pick exactly one variation.
var selectLike = map[configuratoroption.Type]bool{
	configuratoroption.TypeSelect: true, configuratoroption.TypeRadio: true,
	configuratoroption.TypeSelectThumb: true, configuratoroption.TypeArrows: true,
	configuratoroption.TypeMaterial: true, configuratoroption.TypePatterns: true,
}

func TestSeedOptions(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := sys()
		opts := must(c.ConfiguratorOption.Query().WithVariations(func(q *ent.OptionVariationQuery) {
			q.Order(ent.Asc(optionvariation.FieldPosition))
		}).Order(ent.Asc(configuratoroption.FieldConfiguratorID), ent.Asc(configuratoroption.FieldPosition)).All(ctx)).of(t)
		perConf := map[int][]*ent.ConfiguratorOption{}
		for _, o := range opts {
			perConf[o.ConfiguratorID] = append(perConf[o.ConfiguratorID], o)
		}
		types := map[string]bool{}
		for _, o := range perConf[1] {
			types[string(o.Type)] = true
		}
		for _, typ := range schema.OptionTypes {
			if !types[typ] {
				t.Errorf("configurator 1 has no option of type %q", typ)
			}
		}
		if n := len(perConf[2]); n < 2 || n > 3 {
			t.Errorf("configurator 2 has %d options, want 2-3", n)
		}
		if n := len(perConf[3]); n != 2 {
			t.Errorf("configurator 3 has %d options, want 2", n)
		}
		for conf, list := range perConf {
			for i, o := range list {
				if o.Position != i+1 {
					t.Errorf("configurator %d option %q position %d, want %d", conf, o.Title, o.Position, i+1)
				}
				if o.Settings == nil {
					t.Errorf("option %d has no settings", o.ID)
				}
			}
		}
		for _, o := range opts {
			vs := o.Edges.Variations
			if len(vs) < 2 || len(vs) > 4 {
				t.Errorf("option %d (%s) has %d variations, want 2-4", o.ID, o.Type, len(vs))
			}
			selected := 0
			for i, v := range vs {
				if v.Position != i+1 || v.Name == "" {
					t.Errorf("variation %d: position %d name %q", v.ID, v.Position, v.Name)
				}
				if v.Selected {
					selected++
				}
				switch o.Type {
				case configuratoroption.TypeMaterial:
					if v.ModelID == nil || v.MaterialID == nil || v.MaterialCategoryID == nil {
						t.Errorf("material variation %d lacks model, material or category", v.ID)
						continue
					}
					m, err := c.Material.Get(ctx, *v.MaterialID)
					if err != nil {
						t.Errorf("material variation %d: material %d: %v", v.ID, *v.MaterialID, err)
						continue
					}
					if m.OwnerID != o.OwnerID || m.CategoryID == nil || *m.CategoryID != *v.MaterialCategoryID {
						t.Errorf("material variation %d: material %d of owner %d, category %v; variation says %d",
							v.ID, m.ID, m.OwnerID, m.CategoryID, *v.MaterialCategoryID)
					}
				case configuratoroption.TypeText:
					if v.TextValue == nil || v.CustomColor == nil || v.TextFontSize == nil ||
						!strings.HasSuffix(*v.TextFontSize, "px") || v.TextFontFamily == nil || v.TextColorCategoryID == nil {
						t.Errorf("text variation %d lacks text fields: %+v", v.ID, v)
					}
				case configuratoroption.TypeNumeral:
					if v.NumericalDefault == nil {
						t.Errorf("numeral variation %d lacks numerical_default", v.ID)
					}
				}
			}
			if selectLike[o.Type] && selected != 1 {
				t.Errorf("%s option %d has %d selected variations, want 1", o.Type, o.ID, selected)
			}
		}
	})
}

func TestSeedFormsAndSets(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := sys()
		forms := must(c.ConfiguratorForm.Query().WithFields().Order(ent.Asc(configuratorform.FieldID)).All(ctx)).of(t)
		perConf := map[int]int{}
		enabled := map[bool]bool{}
		for _, f := range forms {
			perConf[f.ConfiguratorID]++
			enabled[f.EnableForm] = true
			if n := len(f.Edges.Fields); n < 3 || n > 5 {
				t.Errorf("form %d has %d fields, want 3-5", f.ID, n)
			}
			for _, ff := range f.Edges.Fields {
				var settings map[string]any
				if ff.ConfiguratorID != f.ConfiguratorID || ff.OwnerID != f.OwnerID {
					t.Errorf("field %d: configurator %d owner %d, its form: %d, %d", ff.ID, ff.ConfiguratorID, ff.OwnerID, f.ConfiguratorID, f.OwnerID)
				}
				if err := json.Unmarshal([]byte(ff.Settings), &settings); err != nil {
					t.Errorf("field %d settings %q: %v", ff.ID, ff.Settings, err)
				}
				if ff.MandatoryStatus != "required" && ff.MandatoryStatus != "optional" {
					t.Errorf("field %d mandatory_status %q", ff.ID, ff.MandatoryStatus)
				}
				if !strings.HasPrefix(ff.Type, "form-") || ff.Position < 1 {
					t.Errorf("field %d type %q position %d", ff.ID, ff.Type, ff.Position)
				}
			}
		}
		if want := map[int]int{1: 1, 2: 1, 3: 1}; !reflect.DeepEqual(perConf, want) {
			t.Errorf("forms per configurator = %v, want %v", perConf, want)
		}
		if !enabled[true] || !enabled[false] {
			t.Errorf("enable_form values = %v, want both", enabled)
		}
		if n := must(c.FormField.Query().Where(formfield.FormIDIsNil()).Count(ctx)).of(t); n != 0 {
			t.Errorf("%d form fields without a form", n)
		}

		sets := must(c.OptionSet.Query().WithOptions().Order(ent.Asc(optionset.FieldID)).All(ctx)).of(t)
		setsPerConf := map[int]int{}
		for _, s := range sets {
			setsPerConf[s.ConfiguratorID]++
			if len(s.Edges.Options) == 0 {
				t.Errorf("option set %d names no option", s.ID)
			}
			for _, o := range s.Edges.Options {
				if o.ConfiguratorID != s.ConfiguratorID || o.OwnerID != s.OwnerID {
					t.Errorf("option set %d (configurator %d) holds option %d of configurator %d", s.ID, s.ConfiguratorID, o.ID, o.ConfiguratorID)
				}
			}
		}
		if want := map[int]int{1: 2, 2: 1, 3: 1}; !reflect.DeepEqual(setsPerConf, want) {
			t.Errorf("option sets per configurator = %v, want %v", setsPerConf, want)
		}
	})
}

// TestSeedOwnersConsistent checks that every row belongs to the owner of
// the configurator (or option) it hangs off.
func TestSeedOwnersConsistent(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := sys()
		confOwner := map[int]int{}
		for _, conf := range must(c.Configurator.Query().All(ctx)).of(t) {
			confOwner[conf.ID] = conf.OwnerID
		}
		check := func(kind string, id, ownerID, confID int) {
			t.Helper()
			if want, ok := confOwner[confID]; !ok || want != ownerID {
				t.Errorf("%s %d: owner %d, its configurator %d has owner %d", kind, id, ownerID, confID, want)
			}
		}
		for _, o := range must(c.Order.Query().All(ctx)).of(t) {
			check("order", o.ID, o.OwnerID, o.ConfiguratorID)
		}
		for _, o := range must(c.ConfiguratorOption.Query().All(ctx)).of(t) {
			check("option", o.ID, o.OwnerID, o.ConfiguratorID)
		}
		for _, f := range must(c.ConfiguratorForm.Query().All(ctx)).of(t) {
			check("form", f.ID, f.OwnerID, f.ConfiguratorID)
		}
		for _, f := range must(c.FormField.Query().All(ctx)).of(t) {
			check("form field", f.ID, f.OwnerID, f.ConfiguratorID)
		}
		for _, s := range must(c.OptionSet.Query().All(ctx)).of(t) {
			check("option set", s.ID, s.OwnerID, s.ConfiguratorID)
		}
		for _, v := range must(c.OptionVariation.Query().WithOption().All(ctx)).of(t) {
			if v.OwnerID != v.Edges.Option.OwnerID {
				t.Errorf("variation %d: owner %d, its option %d has owner %d", v.ID, v.OwnerID, v.Edges.Option.ID, v.Edges.Option.OwnerID)
			}
		}
		for _, m := range must(c.Material.Query().WithCategory().WithTexture().All(ctx)).of(t) {
			if cat := m.Edges.Category; cat != nil && cat.OwnerID != m.OwnerID {
				t.Errorf("material %d of owner %d in category %d of owner %d", m.ID, m.OwnerID, cat.ID, cat.OwnerID)
			}
			if tex := m.Edges.Texture; tex != nil && tex.OwnerID != m.OwnerID {
				t.Errorf("material %d of owner %d uses texture %d of owner %d", m.ID, m.OwnerID, tex.ID, tex.OwnerID)
			}
		}
		// Owner 2 has no catalogue rows.
		for name, n := range map[string]int{
			"categories": must(c.MaterialCategory.Query().Where(materialcategory.OwnerID(2)).Count(ctx)).of(t),
			"materials":  must(c.Material.Query().Where(material.OwnerID(2)).Count(ctx)).of(t),
			"textures":   must(c.Texture.Query().Where(texture.OwnerID(2)).Count(ctx)).of(t),
		} {
			if n != 0 {
				t.Errorf("owner 2 has %d %s, want none", n, name)
			}
		}
	})
}

// TestSeedTenancy checks the dataset through the tenancy rules: a viewer
// of owner 2 sees only its own small dataset.
func TestSeedTenancy(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		seed(t, c)
		ctx := viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: 2, Kind: viewer.KindDashboard})
		for name, want := range map[string]int{"orders": 2, "options": 2, "materials": 0, "forms": 1, "option sets": 1} {
			var n int
			var err error
			switch name {
			case "orders":
				n, err = c.Order.Query().Count(ctx)
			case "options":
				n, err = c.ConfiguratorOption.Query().Count(ctx)
			case "materials":
				n, err = c.Material.Query().Count(ctx)
			case "forms":
				n, err = c.ConfiguratorForm.Query().Count(ctx)
			case "option sets":
				n, err = c.OptionSet.Query().Count(ctx)
			}
			if err != nil || n != want {
				t.Errorf("owner 2 sees %d %s (err %v), want %d", n, name, err, want)
			}
		}
	})
}

// TestSeedIgnoresViewer checks that a caller's viewer does not move the
// demo rows to its owner.
func TestSeedIgnoresViewer(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: 1, Kind: viewer.KindDashboard})
		sum, err := Seed(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sum.Owners, wantOwners()) {
			t.Errorf("owners = %+v, want %+v", sum.Owners, wantOwners())
		}
		if n := must(c.Order.Query().Where(order.OwnerID(2)).Count(sys())).of(t); n != 2 {
			t.Errorf("owner 2 has %d orders, want 2", n)
		}
	})
}

func TestSeedTwice(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		first := seed(t, c)
		before := dump(t, c)
		mat := must(c.Material.Get(sys(), 7)).of(t)
		ord := must(c.Order.Get(sys(), 12)).of(t)

		if ok, err := Seeded(context.Background(), c); err != nil || !ok {
			t.Errorf("Seeded = %v, %v after Seed", ok, err)
		}
		second := seed(t, c)
		if second.Created {
			t.Error("second Seed: Created = true")
		}
		first.Created = false
		if !reflect.DeepEqual(first, second) {
			t.Errorf("second summary = %+v, want %+v", second, first)
		}
		after := dump(t, c)
		for table, rows := range before {
			if after[table] != rows {
				t.Errorf("table %s changed by the second Seed", table)
			}
		}
		if m := must(c.Material.Get(sys(), 7)).of(t); !reflect.DeepEqual(jsonOf(t, m), jsonOf(t, mat)) {
			t.Errorf("material 7 = %s, was %s", jsonOf(t, m), jsonOf(t, mat))
		}
		if o := must(c.Order.Get(sys(), 12)).of(t); !reflect.DeepEqual(jsonOf(t, o), jsonOf(t, ord)) {
			t.Errorf("order 12 = %s, was %s", jsonOf(t, o), jsonOf(t, ord))
		}
		if n := must(c.Setting.Query().Where(setting.Key(MarkerKey)).Count(sys())).of(t); n != 1 {
			t.Errorf("%d %s settings, want 1", n, MarkerKey)
		}
		s := must(c.Setting.Query().Where(setting.Key(MarkerKey)).Only(sys())).of(t)
		if s.Value != DatasetVersion {
			t.Errorf("%s = %q, want %q", MarkerKey, s.Value, DatasetVersion)
		}
	})
}

// TestSeedDeterministic seeds two fresh databases of each backend and
// compares every row.
func TestSeedDeterministic(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c1, c2 := dbtest.Open(t, b.URL(t)), dbtest.Open(t, b.URL(t))
			seed(t, c1)
			seed(t, c2)
			d1, d2 := dump(t, c1), dump(t, c2)
			for table, rows := range d1 {
				if d2[table] != rows {
					t.Errorf("table %s differs between two fresh seeds:\n%s\n%s", table, rows, d2[table])
				}
			}
		})
	}
}

// TestSeedConcurrent runs two Seeds at once: exactly one loads the data,
// the other reports it, and nothing is duplicated.
func TestSeedConcurrent(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		var wg sync.WaitGroup
		sums := make([]*Summary, 2)
		errs := make([]error, 2)
		for i := range sums {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sums[i], errs[i] = Seed(context.Background(), c)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("Seed: %v", err)
			}
		}
		if sums[0].Created == sums[1].Created {
			t.Fatalf("Created = %v and %v, want exactly one true", sums[0].Created, sums[1].Created)
		}
		sums[0].Created, sums[1].Created = false, false
		if !reflect.DeepEqual(sums[0], sums[1]) {
			t.Errorf("summaries differ: %+v, %+v", sums[0], sums[1])
		}
		if n := must(c.Owner.Query().Count(sys())).of(t); n != 2 {
			t.Errorf("%d owners after two concurrent seeds, want 2", n)
		}
		if n := must(c.Order.Query().Count(sys())).of(t); n != 32 {
			t.Errorf("%d orders after two concurrent seeds, want 32", n)
		}
	})
}

// TestSeedAtomic makes the seed fail half-way and checks that nothing was
// written, and that a later Seed then loads the whole dataset.
func TestSeedAtomic(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		var fail atomic.Bool
		var orders atomic.Int32
		fail.Store(true)
		boom := errors.New("injected failure")
		c.Order.Use(func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				if fail.Load() && orders.Add(1) == 20 {
					return nil, boom
				}
				return next.Mutate(ctx, m)
			})
		})
		if _, err := Seed(context.Background(), c); !errors.Is(err, boom) {
			t.Fatalf("Seed = %v, want the injected failure", err)
		}
		for table, rows := range dump(t, c) {
			if rows != "[]" && rows != "null" {
				t.Errorf("table %s has rows after a failed seed: %s", table, rows)
			}
		}
		if ok, err := Seeded(context.Background(), c); err != nil || ok {
			t.Errorf("Seeded = %v, %v after a failed seed", ok, err)
		}
		fail.Store(false)
		sum := seed(t, c)
		// PostgreSQL sequences are not transactional, so the ids after a
		// rolled-back seed need not start at 1; the counts must be whole.
		if !sum.Created || len(sum.Owners) != 2 || sum.Orders != 32 || sum.Materials != 25 {
			t.Errorf("summary after retry = %+v", sum)
		}
	})
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dump returns every table's rows, ordered by id, as JSON, including the
// option set memberships and the settings (whose value ent hides from
// JSON). The API token table is left out: minting tokens is not the demo's
// job.
func dump(t *testing.T, c *ent.Client) map[string]string {
	t.Helper()
	ctx := sys()
	d := map[string]string{
		"owners":              jsonOf(t, must(c.Owner.Query().Order(ent.Asc(owner.FieldID)).All(ctx)).of(t)),
		"configurators":       jsonOf(t, must(c.Configurator.Query().Order(ent.Asc(configurator.FieldID)).All(ctx)).of(t)),
		"material_categories": jsonOf(t, must(c.MaterialCategory.Query().Order(ent.Asc(materialcategory.FieldID)).All(ctx)).of(t)),
		"materials":           jsonOf(t, must(c.Material.Query().Order(ent.Asc(material.FieldID)).All(ctx)).of(t)),
		"textures":            jsonOf(t, must(c.Texture.Query().Order(ent.Asc(texture.FieldID)).All(ctx)).of(t)),
		"orders":              jsonOf(t, must(c.Order.Query().Order(ent.Asc(order.FieldID)).All(ctx)).of(t)),
		"configurator_options": jsonOf(t, must(c.ConfiguratorOption.Query().
			Order(ent.Asc(configuratoroption.FieldID)).All(ctx)).of(t)),
		"option_variations":  jsonOf(t, must(c.OptionVariation.Query().Order(ent.Asc(optionvariation.FieldID)).All(ctx)).of(t)),
		"configurator_forms": jsonOf(t, must(c.ConfiguratorForm.Query().Order(ent.Asc(configuratorform.FieldID)).All(ctx)).of(t)),
		"form_fields":        jsonOf(t, must(c.FormField.Query().Order(ent.Asc(formfield.FieldID)).All(ctx)).of(t)),
		"option_sets":        jsonOf(t, must(c.OptionSet.Query().Order(ent.Asc(optionset.FieldID)).All(ctx)).of(t)),
	}
	var members [][2]int
	for _, s := range must(c.OptionSet.Query().WithOptions().All(ctx)).of(t) {
		for _, o := range s.Edges.Options {
			members = append(members, [2]int{s.ID, o.ID})
		}
	}
	sort.Slice(members, func(i, j int) bool {
		if members[i][0] != members[j][0] {
			return members[i][0] < members[j][0]
		}
		return members[i][1] < members[j][1]
	})
	d["option_set_options"] = jsonOf(t, members)
	var settings [][2]string
	for _, s := range must(c.Setting.Query().Order(ent.Asc(setting.FieldID)).All(ctx)).of(t) {
		settings = append(settings, [2]string{s.Key, s.Value})
	}
	d["settings"] = jsonOf(t, settings)
	return d
}

// result carries a value and its error until a test is at hand, so that a
// call returning (T, error) can be checked inline: must(f()).of(t).
type result[T any] struct {
	v   T
	err error
}

func must[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) of(t testing.TB) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}
