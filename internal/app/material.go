package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/valid"
)

// CreateMaterial is a new material: ent's generated input of its
// writable fields.
type CreateMaterial struct{ Input ent.CreateMaterialInput }

// CreateMaterial stores a material and returns its id. It needs a
// dashboard token.
func (a *App) CreateMaterial(ctx context.Context, cmd CreateMaterial) (id int, err error) {
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return 0, err
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		m, err := t.Client.Material.Create().SetInput(cmd.Input).Save(ctx)
		if err != nil {
			return err
		}
		id = m.ID
		return a.emit(ctx, t, events.MaterialCreated, id, m)
	})
	if err != nil {
		return 0, fmt.Errorf("create material: %w", err)
	}
	return id, nil
}

// UpdateMaterial changes the fields Input sets of material ID; Nulls
// are the fields the client set to null (domain names), which clear what
// can be cleared and are refused otherwise (valid.Nulls).
type UpdateMaterial struct {
	ID    int
	Input ent.UpdateMaterialInput
	Nulls []string
}

// UpdateMaterial updates a material. It needs a dashboard token.
func (a *App) UpdateMaterial(ctx context.Context, cmd UpdateMaterial) error {
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return err
	}
	if err := valid.Nulls(&cmd.Input, cmd.Nulls); err != nil {
		return err
	}
	return a.withTx(ctx, func(t *database.Tx) error {
		if err := query.NotFoundAs(t.Client.Material.UpdateOneID(cmd.ID).SetInput(cmd.Input).Exec(ctx), "material", cmd.ID); err != nil {
			return err
		}
		return emitRead(ctx, a, t, events.MaterialUpdated, cmd.ID, t.Client.Material.Query().Where(material.ID(cmd.ID)).Only)
	})
}

// DeleteMaterial is the deletion of material ID.
type DeleteMaterial struct{ ID int }

// DeleteMaterial deletes a material. It needs a dashboard token.
func (a *App) DeleteMaterial(ctx context.Context, cmd DeleteMaterial) error {
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return err
	}
	return a.withTx(ctx, func(t *database.Tx) error {
		if err := query.NotFoundAs(t.Client.Material.DeleteOneID(cmd.ID).Exec(ctx), "material", cmd.ID); err != nil {
			return err
		}
		return a.emit(ctx, t, events.MaterialDeleted, cmd.ID, nil)
	})
}

// CreateShare is override data for the options of the caller's home
// configurator, keyed by option id (internal/override).
type CreateShare struct{ Options json.RawMessage }

// CreateShare stores the override data and answers its share link
// (share.Links.Create), in one transaction. It needs the Open API token
// of a configurator.
func (a *App) CreateShare(ctx context.Context, cmd CreateShare) (link *share.Link, err error) {
	if err := auth.Allow(ctx, auth.Overrides); err != nil {
		return nil, err
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		link, err = a.links.Create(ctx, t.Client, cmd.Options)
		return err
	})
	return link, err
}
