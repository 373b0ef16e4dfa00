package app

import (
	"context"
	"fmt"
	"io"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/upload"
	"github.com/configurator/catalogue/internal/valid"
)

// CreateTexture is a new texture: its name, optional category, image and
// optional bump map.
type CreateTexture struct {
	Name       string
	CategoryID *int
	File       io.Reader
	BumpFile   io.Reader
}

// CreateTexture stores a texture's image, its thumbnails and bump map and
// the texture, and returns its id. It needs a dashboard token.
func (a *App) CreateTexture(ctx context.Context, cmd CreateTexture) (id int, err error) {
	if err := valid.Name("name", cmd.Name); err != nil {
		return 0, err
	}
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return 0, err
	}
	files, done := a.batch(ctx, &err)
	defer done()
	tex, err := files.Texture(ctx, "file", cmd.File)
	if err != nil {
		return 0, err
	}
	bump, err := image(ctx, files, "bump_file", cmd.BumpFile)
	if err != nil {
		return 0, err
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		x, err := t.Client.Texture.Create().SetName(cmd.Name).
			SetTextureFile(tex.File).SetTextureThumbnail50(tex.Thumbnail50).SetTextureThumbnail100(tex.Thumbnail100).
			SetNillableBumpFile(bump).SetNillableCategoryID(cmd.CategoryID).Save(ctx)
		if err != nil {
			return err
		}
		id = x.ID
		return a.emit(ctx, t, events.TextureCreated, id, x)
	})
	if err != nil {
		return 0, fmt.Errorf("create texture: %w", err)
	}
	return id, nil
}

// UpdateTexture changes the fields it sets of texture ID: nil fields
// stay, the Clear flags clear the category and the bump map, as do
// Nulls, the fields the client set to null (domain names; valid.Nulls
// refuses the others), and a new File replaces the image and its
// thumbnails.
type UpdateTexture struct {
	ID            int
	Name          *string
	CategoryID    *int
	ClearCategory bool
	File          io.Reader
	BumpFile      io.Reader
	ClearBumpFile bool
	Nulls         []string
}

// UpdateTexture stores the new files, updates the texture and then
// removes the files it replaced. It needs a dashboard token.
func (a *App) UpdateTexture(ctx context.Context, cmd UpdateTexture) (err error) {
	if err := valid.Nulls(&cmd, cmd.Nulls); err != nil {
		return err
	}
	if err := valid.TextureUpdate(cmd.Name, cmd.CategoryID != nil, cmd.ClearCategory, cmd.BumpFile != nil, cmd.ClearBumpFile); err != nil {
		return err
	}
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return err
	}
	old, err := query.One[ent.Texture](ctx, a.client.Texture.Query().Where(texture.ID(cmd.ID)), "texture", cmd.ID)
	if err != nil {
		return err
	}
	files, done := a.batch(ctx, &err)
	defer done()
	var tex upload.Texture
	var replaced []*string
	if cmd.File != nil {
		t, err := files.Texture(ctx, "file", cmd.File)
		if err != nil {
			return err
		}
		tex = *t
		replaced = append(replaced, old.TextureFile, old.TextureThumbnail50, old.TextureThumbnail100)
	}
	bump, err := image(ctx, files, "bump_file", cmd.BumpFile)
	if err != nil {
		return err
	}
	if cmd.BumpFile != nil || cmd.ClearBumpFile {
		replaced = append(replaced, old.BumpFile)
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		u := t.Client.Texture.UpdateOneID(cmd.ID).SetNillableName(cmd.Name).SetNillableCategoryID(cmd.CategoryID).
			SetNillableTextureFile(nonEmpty(tex.File)).SetNillableTextureThumbnail50(nonEmpty(tex.Thumbnail50)).
			SetNillableTextureThumbnail100(nonEmpty(tex.Thumbnail100)).SetNillableBumpFile(bump)
		if cmd.ClearCategory {
			u.ClearCategoryID()
		}
		if cmd.ClearBumpFile {
			u.ClearBumpFile()
		}
		if err := query.NotFoundAs(u.Exec(ctx), "texture", cmd.ID); err != nil {
			return err
		}
		return emitRead(ctx, a, t, events.TextureUpdated, cmd.ID, t.Client.Texture.Query().Where(texture.ID(cmd.ID)).Only)
	})
	if err != nil {
		return err
	}
	upload.Remove(ctx, a.files, derefs(replaced)...)
	return nil
}

// DeleteTexture is the deletion of texture ID.
type DeleteTexture struct{ ID int }

// DeleteTexture deletes the texture and then its files. It needs a
// dashboard token.
func (a *App) DeleteTexture(ctx context.Context, cmd DeleteTexture) error {
	if err := auth.Allow(ctx, auth.WriteCatalogue); err != nil {
		return err
	}
	old, err := query.One[ent.Texture](ctx, a.client.Texture.Query().Where(texture.ID(cmd.ID)), "texture", cmd.ID)
	if err != nil {
		return err
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		if err := query.NotFoundAs(t.Client.Texture.DeleteOneID(cmd.ID).Exec(ctx), "texture", cmd.ID); err != nil {
			return err
		}
		return a.emit(ctx, t, events.TextureDeleted, cmd.ID, nil)
	})
	if err != nil {
		return err
	}
	upload.Remove(ctx, a.files, derefs([]*string{old.TextureFile, old.TextureThumbnail50, old.TextureThumbnail100, old.BumpFile})...)
	return nil
}

// nonEmpty is s as an optional value: nil when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// derefs returns the non-empty strings among ps.
func derefs(ps []*string) []string {
	var out []string
	for _, p := range ps {
		if p != nil && *p != "" {
			out = append(out, *p)
		}
	}
	return out
}
