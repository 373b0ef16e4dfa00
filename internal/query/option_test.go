package query_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/viewer"
)

// TestOptionWithVariations checks the one-statement read of an option
// against ent's own two-statement read, on both databases: the same
// fields (times, JSON settings and enum included), the variations in
// position order, another owner's option not read, and an option without
// variations left to the caller.
func TestOptionWithVariations(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		sys := privacy.DecisionContext(context.Background(), privacy.Allow)
		a := dbtest.Must(c.Owner.Create().SetName("A").Save(sys))
		b := dbtest.Must(c.Owner.Create().SetName("B").Save(sys))
		conf := dbtest.Must(c.Configurator.Create().SetName("Sofa").SetOwnerID(a.ID).Save(sys))
		opt := dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(a.ID).SetConfiguratorID(conf.ID).SetTitle("Frame").
			SetType(configuratoroption.TypeMaterial).SetSettings(json.RawMessage(`{"columns":3}`)).SetPosition(4).SetCreatedBy("ada").Save(sys))
		for i, name := range []string{"Oak", "Ash", "Walnut"} {
			dbtest.Must(c.OptionVariation.Create().SetOwnerID(a.ID).SetConfiguratorOptionID(opt.ID).SetName(name).SetPosition(3 - i).Save(sys))
		}
		empty := dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(a.ID).SetConfiguratorID(conf.ID).SetTitle("Empty").
			SetType(configuratoroption.TypeSelect).Save(sys))
		ctxA := viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: a.ID, Kind: viewer.KindOpenAPI, ConfiguratorID: conf.ID, TokenID: 1})
		ctxB := viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: b.ID, Kind: viewer.KindDashboard, TokenID: 2})

		got, ok, err := query.OptionWithVariations(ctxA, c, opt.ID)
		if err != nil || !ok {
			t.Fatalf("read: %v, %v", ok, err)
		}
		want := c.ConfiguratorOption.Query().Where(configuratoroption.ID(opt.ID)).WithVariations().OnlyX(ctxA)
		if got.ID != want.ID || got.OwnerID != want.OwnerID || got.ConfiguratorID != want.ConfiguratorID || got.Title != want.Title ||
			got.Type != want.Type || string(got.Settings) != string(want.Settings) || got.Position != want.Position ||
			got.CreatedBy != want.CreatedBy || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
			t.Errorf("option %+v; want %+v", got, want)
		}
		var names []string
		for _, v := range got.Edges.Variations {
			names = append(names, v.Name)
		}
		if len(names) != 3 || names[0] != "Walnut" || names[2] != "Oak" {
			t.Errorf("variations %v; want Walnut, Ash, Oak (position order)", names)
		}
		if o, ok, err := query.OptionWithVariations(ctxB, c, opt.ID); o != nil || ok || err != nil {
			t.Errorf("another owner's option: %v, %v, %v; want nothing read", o, ok, err)
		}
		if o, ok, err := query.OptionWithVariations(ctxA, c, empty.ID); o != nil || ok || err != nil {
			t.Errorf("an option without variations: %v, %v, %v; want it left to the caller", o, ok, err)
		}
	})
}
