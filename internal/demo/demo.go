// Package demo loads a small, realistic dataset (a furniture and sneaker
// shop and a bike workshop) so that the service can be tried, demonstrated
// and tested end to end without hand-made data. The dataset is
// deterministic, so two fresh databases get identical rows and ids, and
// idempotent, so running it again never duplicates anything.
package demo

import (
	"context"
	"errors"
	"fmt"

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
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/setting"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/internal/viewer"
)

// DatasetVersion is stored as the value of the MarkerKey setting, so that a
// later, different dataset can tell which one a database holds.
const DatasetVersion = "2"

// assetBase is where the demo's files (3D models, texture images, order
// snapshots, invoices) would be hosted: the platform keeps such assets on a
// CDN, so the demo records absolute URLs there (an example.com-style host
// that resolves nowhere), as the spec's URL fields expect.
const assetBase = "https://assets.configurator.example/demo/"

// MarkerKey is the key of the Setting row that records that the demo
// dataset was loaded; it is written in the same transaction as the data, so
// its presence means the whole dataset is there.
const MarkerKey = "demo_seeded"

// Summary is what `server seed --demo` prints as JSON on stdout, so that a
// caller (a person or a script minting tokens) learns the ids of the demo
// owners and configurators and can check what was loaded.
type Summary struct {
	Owners             []OwnerSummary `json:"owners"`
	MaterialCategories int            `json:"material_categories"`
	Materials          int            `json:"materials"`
	Textures           int            `json:"textures"`
	Orders             int            `json:"orders"`
	Options            int            `json:"options"`
	Variations         int            `json:"variations"`
	Forms              int            `json:"forms"`
	FormFields         int            `json:"form_fields"`
	OptionSets         int            `json:"option_sets"`
	Created            bool           `json:"created"` // false when the data was already there
}

// OwnerSummary names a demo owner and its configurators, because tokens are
// minted per owner (dashboard) or per configurator (Open API).
type OwnerSummary struct {
	ID            int    `json:"id"`
	Name          string `json:"name"`
	Configurators []int  `json:"configurators"`
}

// errAlreadySeeded reports that another Seed committed the marker first.
var errAlreadySeeded = errors.New("demo dataset already seeded")

// Seed loads the demo dataset in one transaction, so that a failure leaves
// nothing half-made, and returns its summary. When the dataset is already
// there (the MarkerKey setting exists) it writes nothing and returns the
// summary of the existing demo data with Created false.
//
// Seeding is system work: it runs under a privacy Allow decision, without
// the caller's viewer (whose owner would otherwise be forced on every new
// row), and sets owner_id explicitly on every record. On a fresh database
// the ids are 1..n in every table; on a database that already holds other
// owners' rows the ids simply follow them.
func Seed(ctx context.Context, c *ent.Client) (*Summary, error) {
	ctx = privacy.DecisionContext(viewer.NewContext(ctx, nil), privacy.Allow)
	tx, err := c.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo: begin transaction: %w", err)
	}
	sum, err := seedTx(ctx, tx)
	switch {
	case errors.Is(err, errAlreadySeeded):
		// A concurrent Seed won the race for the marker; our transaction
		// is aborted, so read what the winner committed.
		tx.Rollback()
		return summarize(ctx, c, false)
	case err != nil:
		if rerr := tx.Rollback(); rerr != nil {
			err = fmt.Errorf("%w (rollback: %v)", err, rerr)
		}
		return nil, err
	case !sum.Created:
		// Nothing was written: end the read-only transaction.
		if err := tx.Rollback(); err != nil {
			return nil, fmt.Errorf("demo: end transaction: %w", err)
		}
		return sum, nil
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("demo: commit: %w", err)
	}
	return sum, nil
}

// Seeded reports whether the demo dataset was loaded (the MarkerKey setting
// exists), so that callers such as serve can rely on the demo's owners and
// configurators without seeding. It is system work and reads under a
// privacy Allow decision.
func Seeded(ctx context.Context, c *ent.Client) (bool, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	ok, err := c.Setting.Query().Where(setting.Key(MarkerKey)).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("demo: look for the %s setting: %w", MarkerKey, err)
	}
	return ok, nil
}

// seedTx checks for the marker and, when it is missing, writes the marker
// and the dataset through tx.
func seedTx(ctx context.Context, tx *ent.Tx) (*Summary, error) {
	seeded, err := Seeded(ctx, tx.Client())
	if err != nil {
		return nil, err
	}
	if seeded {
		return summarize(ctx, tx.Client(), false)
	}
	// The marker is written first: its unique key makes a concurrent
	// Seed on PostgreSQL wait here and then fail fast, instead of building
	// a second dataset that could only be rolled back at the end. (SQLite
	// transactions are serialized before they start.)
	err = tx.Setting.Create().SetKey(MarkerKey).SetValue(DatasetVersion).Exec(ctx)
	if ent.IsConstraintError(err) {
		return nil, errAlreadySeeded
	}
	if err != nil {
		return nil, fmt.Errorf("demo: write the %s setting: %w", MarkerKey, err)
	}
	if err := newSeeder(tx).run(ctx); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return summarize(ctx, tx.Client(), true)
}

// summarize describes the demo data found through c: the first owner of
// each demo owner name (lowest id), its configurators, and the rows of
// those owners in every table, counted by owner_id. Both the fresh and the
// repeated Seed report through it, so they agree.
func summarize(ctx context.Context, c *ent.Client, created bool) (*Summary, error) {
	sum := &Summary{Owners: []OwnerSummary{}, Created: created}
	var ids []int
	for _, spec := range demoOwners {
		o, err := c.Owner.Query().Where(owner.Name(spec.name)).Order(ent.Asc(owner.FieldID)).First(ctx)
		if ent.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("demo: find owner %q: %w", spec.name, err)
		}
		confs, err := c.Configurator.Query().Where(configurator.OwnerID(o.ID)).
			Order(ent.Asc(configurator.FieldID)).IDs(ctx)
		if err != nil {
			return nil, fmt.Errorf("demo: list configurators of owner %d: %w", o.ID, err)
		}
		if confs == nil {
			confs = []int{}
		}
		sum.Owners = append(sum.Owners, OwnerSummary{ID: o.ID, Name: o.Name, Configurators: confs})
		ids = append(ids, o.ID)
	}
	counts := []struct {
		table string
		dst   *int
		count func(context.Context) (int, error)
	}{
		{"material categories", &sum.MaterialCategories, c.MaterialCategory.Query().Where(materialcategory.OwnerIDIn(ids...)).Count},
		{"materials", &sum.Materials, c.Material.Query().Where(material.OwnerIDIn(ids...)).Count},
		{"textures", &sum.Textures, c.Texture.Query().Where(texture.OwnerIDIn(ids...)).Count},
		{"orders", &sum.Orders, c.Order.Query().Where(order.OwnerIDIn(ids...)).Count},
		{"options", &sum.Options, c.ConfiguratorOption.Query().Where(configuratoroption.OwnerIDIn(ids...)).Count},
		{"variations", &sum.Variations, c.OptionVariation.Query().Where(optionvariation.OwnerIDIn(ids...)).Count},
		{"forms", &sum.Forms, c.ConfiguratorForm.Query().Where(configuratorform.OwnerIDIn(ids...)).Count},
		{"form fields", &sum.FormFields, c.FormField.Query().Where(formfield.OwnerIDIn(ids...)).Count},
		{"option sets", &sum.OptionSets, c.OptionSet.Query().Where(optionset.OwnerIDIn(ids...)).Count},
	}
	for _, n := range counts {
		v, err := n.count(ctx)
		if err != nil {
			return nil, fmt.Errorf("demo: count %s: %w", n.table, err)
		}
		*n.dst = v
	}
	return sum, nil
}
