package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/optionvariation"
	"github.com/configurator/catalogue/internal/dbtest"
)

const setOverrides = `mutation($o: Map!) { setOptionOverrides(options: $o) { url key } }`

const readShare = `query($k: String!) { sharedConfigurator(key: $k) { key id name options { id type title
  parameterList { id name selected materialID modelID textValue selectedParts } } } }`

type sharedVariation struct {
	ID            gid
	Name          string
	Selected      bool
	MaterialID    *int
	ModelID       *int
	TextValue     *string
	SelectedParts []string
}

type sharedConf struct {
	Key     string
	ID      gid
	Name    string
	Options []struct {
		ID            gid
		Type          string
		ParameterList []sharedVariation
	}
}

// variations returns the variations of option id as the share shows them.
func (s sharedConf) variations(id int) []sharedVariation {
	for _, o := range s.Options {
		if int(o.ID) == id {
			return o.ParameterList
		}
	}
	return nil
}

func TestOptionOverrides(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctx := dbtest.Sys
		optsOf := func(conf int) map[configuratoroption.Type]*ent.ConfiguratorOption {
			m := map[configuratoroption.Type]*ent.ConfiguratorOption{}
			for _, o := range dbtest.Must(c.ConfiguratorOption.Query().Where(configuratoroption.ConfiguratorID(conf)).
				WithVariations(func(q *ent.OptionVariationQuery) { q.Order(optionvariation.ByPosition(), optionvariation.ByID()) }).All(ctx)) {
				m[o.Type] = o
			}
			return m
		}
		a1, a2 := optsOf(w.a1.ID), optsOf(w.a2.ID)
		sel, mat, txt := a1[configuratoroption.TypeSelect], a1[configuratoroption.TypeMaterial], a1[configuratoroption.TypeText]
		pick := sel.Edges.Variations[2]
		matA := dbtest.Must(c.Material.Query().Where(material.OwnerID(w.a.ID)).First(ctx))
		matB := dbtest.Must(c.Material.Query().Where(material.OwnerID(w.b.ID)).First(ctx))
		data := map[string]any{
			fmt.Sprint(sel.ID): map[string]any{"id": pick.ID},
			fmt.Sprint(mat.ID): map[string]any{"id": mat.Edges.Variations[1].ID, "material_id": matA.ID, "selected_parts": []string{"seat"}},
			fmt.Sprint(txt.ID): map[string]any{"id": txt.Edges.Variations[0].ID, "text_value": "Hello"},
		}

		var link struct{ SetOptionOverrides struct{ URL, Key string } }
		w.ok(t, w.tokA, setOverrides, map[string]any{"o": data}, &link)
		l := link.SetOptionOverrides
		if l.URL != shareBase+l.Key || len(l.Key) != 32 {
			t.Fatalf("link = %+v; want %s<32 hex digits>", l, shareBase)
		}

		// Read without a token: the key is the credential.
		var got struct{ SharedConfigurator sharedConf }
		w.ok(t, "", readShare, map[string]any{"k": l.Key}, &got)
		sc := got.SharedConfigurator
		if int(sc.ID) != w.a1.ID || sc.Name != w.a1.Name || len(sc.Options) != 3 {
			t.Fatalf("shared configurator = %+v; want %s with its 3 options", sc, w.a1.Name)
		}
		for i, v := range sc.variations(sel.ID) {
			if v.Selected != (int(v.ID) == pick.ID) {
				t.Errorf("select variation %d selected = %v; want only %d selected", i, v.Selected, pick.ID)
			}
		}
		for i, v := range sc.variations(mat.ID) {
			stored := mat.Edges.Variations[i]
			if i == 1 {
				if v.MaterialID == nil || *v.MaterialID != matA.ID || len(v.SelectedParts) != 1 || v.SelectedParts[0] != "seat" {
					t.Errorf("overridden material variation = %+v; want material %d on part seat", v, matA.ID)
				}
			} else if v.MaterialID != nil || v.SelectedParts != nil || v.Selected != stored.Selected {
				t.Errorf("material variation %d = %+v; want it unchanged", i, v)
			}
		}
		if v := sc.variations(txt.ID); v[0].TextValue == nil || *v[0].TextValue != "Hello" || v[1].TextValue != nil {
			t.Errorf("text variations = %+v; want Hello on the first only", v)
		}

		// A normal read is unchanged.
		var plain struct {
			ConfiguratorOption struct{ Variations []struct{ Selected bool } }
		}
		w.ok(t, w.tokA, `query($id: ID!) { configuratorOption(id: $id) { variations { selected } } }`, map[string]any{"id": sel.ID}, &plain)
		for i, v := range plain.ConfiguratorOption.Variations {
			if v.Selected != sel.Edges.Variations[i].Selected {
				t.Errorf("token read of variation %d selected = %v; want the stored %v", i, v.Selected, sel.Edges.Variations[i].Selected)
			}
		}

		// The same content gives the same link; new content a new one, and
		// the first link keeps its meaning.
		var again struct{ SetOptionOverrides struct{ URL, Key string } }
		w.ok(t, w.tokA, setOverrides, map[string]any{"o": data}, &again)
		if again.SetOptionOverrides != l {
			t.Errorf("same content = %+v; want the same link %+v", again.SetOptionOverrides, l)
		}
		other := map[string]any{fmt.Sprint(sel.ID): map[string]any{"id": sel.Edges.Variations[0].ID}}
		w.ok(t, w.tokA, setOverrides, map[string]any{"o": other}, &again)
		if again.SetOptionOverrides.Key == l.Key {
			t.Errorf("new content returned the old key")
		}
		w.ok(t, "", readShare, map[string]any{"k": l.Key}, &got)
		if v := got.SharedConfigurator.variations(sel.ID); !v[2].Selected || v[0].Selected {
			t.Errorf("first link after new overrides = %+v; want its own choice (variation 3)", v)
		}
		stored := dbtest.Must(c.APIToken.Get(ctx, w.recA.ID)).OptionsData
		if len(stored) != 1 {
			t.Errorf("token options data = %v; want the latest override set only", stored)
		}

		for _, tc := range []struct {
			name, token string
			options     any
			code, field string
		}{
			{"another configurator's option", w.tokA, map[string]any{fmt.Sprint(a2[configuratoroption.TypeSelect].ID): map[string]any{"id": 1}},
				"BAD_REQUEST", "options." + fmt.Sprint(a2[configuratoroption.TypeSelect].ID)},
			{"another owner's token", w.tokB, data, "BAD_REQUEST", ""},
			{"wrong json type", w.tokA, map[string]any{fmt.Sprint(mat.ID): map[string]any{"id": mat.Edges.Variations[0].ID, "material_id": "77"}},
				"BAD_REQUEST", fmt.Sprintf("options.%d.material_id", mat.ID)},
			{"another owner's material", w.tokA, map[string]any{fmt.Sprint(mat.ID): map[string]any{"id": mat.Edges.Variations[0].ID, "material_id": matB.ID}},
				"BAD_REQUEST", fmt.Sprintf("options.%d.material_id", mat.ID)},
			{"unknown material category", w.tokA, map[string]any{fmt.Sprint(mat.ID): map[string]any{"id": mat.Edges.Variations[0].ID, "material_category_id": 999999}},
				"BAD_REQUEST", fmt.Sprintf("options.%d.material_category_id", mat.ID)},
			{"unknown variation", w.tokA, map[string]any{fmt.Sprint(sel.ID): map[string]any{"id": 999999}}, "BAD_REQUEST", fmt.Sprintf("options.%d.id", sel.ID)},
			{"empty", w.tokA, map[string]any{}, "BAD_REQUEST", "options"},
			{"dashboard token", w.dashA, data, "FORBIDDEN", ""},
			{"no token", "", data, "UNAUTHENTICATED", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := w.query(t, tc.token, setOverrides, map[string]any{"o": tc.options})
				if r.code() != tc.code || (tc.field != "" && r.field() != tc.field) {
					t.Errorf("= %s (field %q) %+v; want %s (field %q)", r.code(), r.field(), r.Errors, tc.code, tc.field)
				}
			})
		}

		// Anonymous operations may read share links and nothing else.
		if r := w.query(t, "", `{ sharedConfigurator(key: "`+l.Key+`") { id } orders { totalCount } }`, nil); r.Status != http.StatusUnauthorized {
			t.Errorf("anonymous share read with orders = %d; want 401", r.Status)
		}
		for _, key := range []string{strings.Repeat("0", 32), "../../etc", l.Key + "0"} {
			if r := w.query(t, "", readShare, map[string]any{"k": key}); r.code() != "NOT_FOUND" {
				t.Errorf("sharedConfigurator(%q) = %s; want NOT_FOUND", key, r.code())
			}
		}
		if err := w.tokens.Revoke(context.Background(), w.recA.ID); err != nil {
			t.Fatal(err)
		}
		if r := w.query(t, "", readShare, map[string]any{"k": l.Key}); r.code() != "NOT_FOUND" {
			t.Errorf("link of a revoked token = %s; want NOT_FOUND", r.code())
		}
	})
}

// TestOptionOverridesConcurrent: the same overrides posted at once by one
// token give one snapshot and the same link to every caller.
func TestOptionOverridesConcurrent(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		ctx := dbtest.Sys
		o := dbtest.Must(c.ConfiguratorOption.Query().Where(configuratoroption.ConfiguratorID(w.a1.ID), configuratoroption.TypeEQ(configuratoroption.TypeSelect)).
			WithVariations().Only(ctx))
		data := map[string]any{fmt.Sprint(o.ID): map[string]any{"id": o.Edges.Variations[0].ID}}
		const n = 8
		keys := make(chan string, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := w.query(t, w.tokA, setOverrides, map[string]any{"o": data})
				if len(r.Errors) > 0 {
					t.Errorf("concurrent setOptionOverrides: %+v", r.Errors)
					return
				}
				var d struct{ SetOptionOverrides struct{ Key string } }
				json.Unmarshal(r.Data, &d)
				keys <- d.SetOptionOverrides.Key
			}()
		}
		wg.Wait()
		close(keys)
		seen := map[string]bool{}
		for k := range keys {
			seen[k] = true
		}
		if len(seen) != 1 {
			t.Errorf("%d concurrent posts of the same overrides gave %d keys; want 1", n, len(seen))
		}
		if got := dbtest.Must(c.Share.Query().Count(ctx)); got != 1 {
			t.Errorf("snapshots stored = %d; want 1", got)
		}
	})
}
