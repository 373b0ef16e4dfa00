package rest

import (
	"net/http"

	"github.com/configurator/catalogue/graph/model"
)

// materialPage shapes GET /materials: a bare array, paged.
func materialPage(p *model.MaterialPage) (any, *model.Pagination) {
	return presentEach(p.Data, presentMaterial), p.Pagination
}

// listMaterialCategories is GET /materials-categories/list: every
// category, by default newest first; the list has no pagination.
func (h *handler) listMaterialCategories(r *http.Request) (any, error) {
	q, err := readQuery(r, nil, "order_by", "order")
	if err != nil {
		return nil, err
	}
	by, dir := sortBy(q, categorySorts), q.direction()
	if err := q.err(); err != nil {
		return nil, err
	}
	cats, err := h.res.Query().MaterialCategoryList(r.Context(), by, dir)
	return presentAll(cats, presentMaterialCategory), err
}
