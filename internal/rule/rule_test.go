package rule_test

import (
	"context"
	"errors"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/rule"
	"github.com/configurator/catalogue/internal/viewer"
)

// TestOwner pins the one decision of tenancy: a viewer is confined to its
// owner, system work to none, and a request without a viewer is refused.
func TestOwner(t *testing.T) {
	dash := viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: 7, Kind: viewer.KindDashboard})
	cases := []struct {
		name  string
		ctx   context.Context
		owner int
		all   bool
		err   error
	}{
		{"viewer", dash, 7, false, nil},
		{"no viewer", context.Background(), 0, false, apperr.ErrNoToken},
		{"system", dbtest.Sys, 0, true, nil},
		{"system with a viewer", privacy.DecisionContext(dash, privacy.Allow), 0, true, nil},
		{"denied, with a viewer", privacy.DecisionContext(dash, privacy.Deny), 7, false, nil},
	}
	for _, c := range cases {
		owner, all, err := rule.Owner(c.ctx)
		if owner != c.owner || all != c.all || !errors.Is(err, c.err) {
			t.Errorf("%s: Owner = %d, %v, %v; want %d, %v, %v", c.name, owner, all, err, c.owner, c.all, c.err)
		}
	}
}

// TestSetOwner checks the hook that follows rule.Owner on creation: a
// viewer's record is its owner's whatever the input says, and system work
// keeps the owner it set even when a viewer is in its context.
func TestSetOwner(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		a := dbtest.NewTenant(t, c, "a")
		b := dbtest.NewTenant(t, c, "b")
		cat := dbtest.Must(c.MaterialCategory.Create().SetTitle("forged").SetOwnerID(b.ID).Save(a.Dash(1)))
		if cat.OwnerID != a.ID {
			t.Errorf("a viewer of owner %d created a category of owner %d; want its own", a.ID, cat.OwnerID)
		}
		sys := privacy.DecisionContext(a.Dash(1), privacy.Allow)
		cat = dbtest.Must(c.MaterialCategory.Create().SetTitle("seeded").SetOwnerID(b.ID).Save(sys))
		if cat.OwnerID != b.ID {
			t.Errorf("system work set owner %d and the record is owner %d's", b.ID, cat.OwnerID)
		}
	})
}
