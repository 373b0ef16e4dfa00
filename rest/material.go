package rest

import (
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// materialSorts are the order_by values of the material list.
var materialSorts = sortable(
	ent.MaterialOrderFieldID, ent.MaterialOrderFieldCreatedAt, ent.MaterialOrderFieldUpdatedAt,
	ent.MaterialOrderFieldName,
)

// materialCategorySorts are the order_by values of the category list.
var materialCategorySorts = sortable(
	ent.MaterialCategoryOrderFieldID, ent.MaterialCategoryOrderFieldCreatedAt,
	ent.MaterialCategoryOrderFieldUpdatedAt, ent.MaterialCategoryOrderFieldTitle,
)

// listMaterials is GET /materials: a bare array, paged.
func (h *handler) listMaterials(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	page, perPage := p.page()
	by, dir := sortBy(p, materialSorts), p.direction()
	categoryID, textureID := p.id("category_id"), p.id("texture_id")
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().MaterialsPage(r.Context(), model.MaterialsPageArgs{
		Where: &ent.MaterialWhereInput{CategoryID: categoryID, TextureID: textureID},
		Page:  page, PerPage: perPage, OrderBy: by, Order: dir,
	})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentMaterial), res.Pagination, h.linksOf(p.q, "/materials", res.Pagination))
}

// listMaterialCategories is GET /materials-categories/list: every
// category, by default newest first; the list has no pagination.
func (h *handler) listMaterialCategories(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	by, dir := sortBy(p, materialCategorySorts), p.direction()
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	cats, err := h.res.Query().MaterialCategoryList(r.Context(), by, dir)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentAll(cats, presentMaterialCategory))
}
