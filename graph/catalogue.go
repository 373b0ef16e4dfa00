package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/imaging"
)

// materialsPage lists materials with their category and texture loaded.
func (r *Resolver) materialsPage(ctx context.Context, page, perPage *int, orderBy *ent.MaterialOrderField, dir *entgql.OrderDirection, categoryID, textureID *int) (*model.MaterialPage, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: material.FieldCreatedAt, desc: true})
	if err != nil {
		return nil, err
	}
	q := r.client.Material.Query()
	if categoryID != nil {
		q = q.Where(material.CategoryID(*categoryID))
	}
	if textureID != nil {
		q = q.Where(material.TextureID(*textureID))
	}
	items, info, err := paginate[ent.Material, material.OrderOption](ctx, q, page, perPage, sort, func(q *ent.MaterialQuery) (*ent.MaterialQuery, error) {
		return eager(ctx, q, restMaterial, "data")
	})
	if err != nil {
		return nil, err
	}
	return &model.MaterialPage{Data: items, Pagination: info}, nil
}

// restMaterial loads what REST v1 shows with a material.
func restMaterial(q *ent.MaterialQuery) *ent.MaterialQuery { return q.WithCategory().WithTexture() }

func (r *Resolver) material(ctx context.Context, id int) (*ent.Material, error) {
	q, err := eager(ctx, r.client.Material.Query().Where(material.ID(id)), restMaterial)
	if err != nil {
		return nil, err
	}
	return one[ent.Material](ctx, q, "material", id)
}

// materialCategoryList returns every category; the spec's default order is
// created_at desc.
func (r *Resolver) materialCategoryList(ctx context.Context, orderBy *ent.MaterialCategoryOrderField, dir *entgql.OrderDirection) ([]*ent.MaterialCategory, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: materialcategory.FieldCreatedAt, desc: true})
	if err != nil {
		return nil, err
	}
	q, err := eager(ctx, r.client.MaterialCategory.Query(), noEdges[*ent.MaterialCategoryQuery])
	if err != nil {
		return nil, err
	}
	for _, t := range sort.terms() {
		q = q.Order(t)
	}
	cats, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list material categories: %w", err)
	}
	return cats, nil
}

func (r *Resolver) texturesPage(ctx context.Context, page, perPage *int, orderBy *ent.TextureOrderField, dir *entgql.OrderDirection, categoryID *int) (*model.TexturePage, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: texture.FieldCreatedAt, desc: true})
	if err != nil {
		return nil, err
	}
	q := r.client.Texture.Query()
	if categoryID != nil {
		q = q.Where(texture.CategoryID(*categoryID))
	}
	items, info, err := paginate[ent.Texture, texture.OrderOption](ctx, q, page, perPage, sort, func(q *ent.TextureQuery) (*ent.TextureQuery, error) {
		return eager(ctx, q, noEdges[*ent.TextureQuery], "data")
	})
	if err != nil {
		return nil, err
	}
	return &model.TexturePage{Data: items, Pagination: info}, nil
}

func (r *Resolver) texture(ctx context.Context, id int) (*ent.Texture, error) {
	q, err := eager(ctx, r.client.Texture.Query().Where(texture.ID(id)), noEdges[*ent.TextureQuery])
	if err != nil {
		return nil, err
	}
	return one[ent.Texture](ctx, q, "texture", id)
}

// createMaterial inserts a material (dashboard tokens only, by the privacy
// rules); category and texture must be the caller's owner's.
func (r *Resolver) createMaterial(ctx context.Context, in ent.CreateMaterialInput) (*ent.Material, error) {
	var id int
	err := r.withTx(ctx, func(c *ent.Client) error {
		m, err := c.Material.Create().SetInput(in).Save(ctx)
		if err != nil {
			return fmt.Errorf("create material: %w", err)
		}
		id = m.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.material(ctx, id)
}

// updateMaterial changes the given fields of a material of the caller's
// owner.
func (r *Resolver) updateMaterial(ctx context.Context, id int, in ent.UpdateMaterialInput) (*ent.Material, error) {
	err := r.withTx(ctx, func(c *ent.Client) error {
		return notFoundAs(c.Material.UpdateOneID(id).SetInput(in).Exec(ctx), "material", id)
	})
	if err != nil {
		return nil, err
	}
	return r.material(ctx, id)
}

// deleteMaterial deletes a material of the caller's owner.
func (r *Resolver) deleteMaterial(ctx context.Context, id int) (int, error) {
	err := r.withTx(ctx, func(c *ent.Client) error {
		return notFoundAs(c.Material.DeleteOneID(id).Exec(ctx), "material", id)
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// Thumbnail sides of a texture, in pixels (texture_thumbnail_50 and _100).
var thumbnailSides = [2]int{50, 100}

// textureFiles stores a texture image and makes its thumbnails.
func (u *uploads) textureFiles(ctx context.Context, field string, f *graphql.Upload) (file, thumb50, thumb100 string, err error) {
	saved, err := u.image(ctx, field, f)
	if err != nil {
		return "", "", "", err
	}
	var thumbs [2]string
	for i, side := range thumbnailSides {
		data, err := imaging.Thumbnail(saved.Data, side)
		if err != nil {
			// A file whose header is sound but whose pixels are not is
			// found only here: it is the client's bad file, not a fault.
			return "", "", "", uploadError(field, err)
		}
		if thumbs[i], err = u.bytes(ctx, data, imaging.PNG); err != nil {
			return "", "", "", err
		}
	}
	return saved.URL, thumbs[0], thumbs[1], nil
}

// createTexture stores a texture image with its thumbnails and inserts the
// texture (dashboard tokens only).
func (r *Resolver) createTexture(ctx context.Context, in model.CreateTextureInput) (_ *ent.Texture, err error) {
	if strings.TrimSpace(in.Name) == "" {
		return nil, apperr.Field("name", "name must not be empty")
	}
	if err := r.mayWriteCatalogue(ctx); err != nil {
		return nil, err
	}
	up := &uploads{r: r}
	defer func() {
		if err != nil {
			up.discard(ctx)
		}
	}()
	file, t50, t100, err := up.textureFiles(ctx, "file", &in.File)
	if err != nil {
		return nil, err
	}
	var bump *string
	if in.BumpFile != nil {
		s, err := up.image(ctx, "bumpFile", in.BumpFile)
		if err != nil {
			return nil, err
		}
		bump = &s.URL
	}
	var id int
	err = r.withTx(ctx, func(c *ent.Client) error {
		t, err := c.Texture.Create().SetName(in.Name).
			SetTextureFile(file).SetTextureThumbnail50(t50).SetTextureThumbnail100(t100).
			SetNillableBumpFile(bump).SetNillableCategoryID(in.CategoryID).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("create texture: %w", err)
		}
		id = t.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.texture(ctx, id)
}

// updateTexture changes the given fields of a texture; a new image
// replaces the old one and its thumbnails, whose files are then removed.
func (r *Resolver) updateTexture(ctx context.Context, id int, in model.UpdateTextureInput) (_ *ent.Texture, err error) {
	if in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		return nil, apperr.Field("name", "name must not be empty")
	}
	if in.CategoryID != nil && in.ClearCategory != nil && *in.ClearCategory {
		return nil, apperr.Field("clearCategory", "give categoryId or clearCategory, not both")
	}
	if in.BumpFile != nil && in.ClearBumpFile != nil && *in.ClearBumpFile {
		return nil, apperr.Field("clearBumpFile", "give bumpFile or clearBumpFile, not both")
	}
	if err := r.mayWriteCatalogue(ctx); err != nil {
		return nil, err
	}
	old, err := r.storedTexture(ctx, id)
	if err != nil {
		return nil, err
	}
	up := &uploads{r: r}
	defer func() {
		if err != nil {
			up.discard(ctx)
		}
	}()
	var file, t50, t100, bump *string
	var replaced []*string
	if in.File != nil {
		f, a, b, err := up.textureFiles(ctx, "file", in.File)
		if err != nil {
			return nil, err
		}
		file, t50, t100 = &f, &a, &b
		replaced = append(replaced, old.TextureFile, old.TextureThumbnail50, old.TextureThumbnail100)
	}
	if in.BumpFile != nil {
		s, err := up.image(ctx, "bumpFile", in.BumpFile)
		if err != nil {
			return nil, err
		}
		bump = &s.URL
	}
	clearCategory := in.ClearCategory != nil && *in.ClearCategory
	clearBump := in.ClearBumpFile != nil && *in.ClearBumpFile
	if in.BumpFile != nil || clearBump {
		replaced = append(replaced, old.BumpFile)
	}
	err = r.withTx(ctx, func(c *ent.Client) error {
		u := c.Texture.UpdateOneID(id).SetNillableName(in.Name).SetNillableCategoryID(in.CategoryID).
			SetNillableTextureFile(file).SetNillableTextureThumbnail50(t50).SetNillableTextureThumbnail100(t100).
			SetNillableBumpFile(bump)
		if clearCategory {
			u.ClearCategoryID()
		}
		if clearBump {
			u.ClearBumpFile()
		}
		return notFoundAs(u.Exec(ctx), "texture", id)
	})
	if err != nil {
		return nil, err
	}
	r.removeFiles(ctx, derefs(replaced)...)
	return r.texture(ctx, id)
}

// deleteTexture deletes a texture and then its files; materials that used
// it keep existing without a texture.
func (r *Resolver) deleteTexture(ctx context.Context, id int) (int, error) {
	if err := r.mayWriteCatalogue(ctx); err != nil {
		return 0, err
	}
	old, err := r.storedTexture(ctx, id)
	if err != nil {
		return 0, err
	}
	err = r.withTx(ctx, func(c *ent.Client) error {
		return notFoundAs(c.Texture.DeleteOneID(id).Exec(ctx), "texture", id)
	})
	if err != nil {
		return 0, err
	}
	r.removeFiles(ctx, derefs([]*string{old.TextureFile, old.TextureThumbnail50, old.TextureThumbnail100, old.BumpFile})...)
	return id, nil
}

// storedTexture loads a texture whole, whatever the operation selects, to
// learn which files a write replaces.
func (r *Resolver) storedTexture(ctx context.Context, id int) (*ent.Texture, error) {
	return one[ent.Texture](ctx, r.client.Texture.Query().Where(texture.ID(id)), "texture", id)
}

// mayWriteCatalogue checks the dashboard scope before any file is stored;
// the privacy rules check it again on the write itself.
func (r *Resolver) mayWriteCatalogue(ctx context.Context) error {
	v, err := viewerOf(ctx)
	if err != nil {
		return err
	}
	if !v.Dashboard() {
		return apperr.E(apperr.Forbidden, "this write needs a dashboard token")
	}
	return nil
}

// notFoundAs turns ent's not-found of a write by id into NotFound naming
// the record.
func notFoundAs(err error, what string, id int) error {
	if ent.IsNotFound(err) {
		return apperr.E(apperr.NotFound, "%s %d not found", what, id)
	}
	if err != nil {
		return fmt.Errorf("write %s %d: %w", what, id, err)
	}
	return nil
}

func derefs(ps []*string) []string {
	var out []string
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}
