package graph

import (
	"context"
	"fmt"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/materialcategory"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/graph/model"
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
