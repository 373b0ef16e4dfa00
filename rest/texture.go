package rest

import (
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// textureSorts are the order_by values of the texture list.
var textureSorts = sortable(
	ent.TextureOrderFieldID, ent.TextureOrderFieldCreatedAt, ent.TextureOrderFieldUpdatedAt,
	ent.TextureOrderFieldName,
)

// listTextures is GET /textures: a bare array, paged.
func (h *handler) listTextures(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	page, perPage := p.page()
	by, dir := sortBy(p, textureSorts), p.direction()
	categoryID := p.id("category_id")
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().TexturesPage(r.Context(), model.TexturesPageArgs{
		Where: &ent.TextureWhereInput{CategoryID: categoryID},
		Page:  page, PerPage: perPage, OrderBy: by, Order: dir,
	})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentTexture), res.Pagination, h.linksOf(p.q, "/textures", res.Pagination))
}
