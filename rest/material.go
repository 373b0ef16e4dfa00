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
func (h *handler) listMaterialCategories(w http.ResponseWriter, r *http.Request) {
	q, err := readQuery(r, nil, "order_by", "order")
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	by, dir := sortBy(q, categorySorts), q.direction()
	if err := q.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	cats, err := h.res.Query().MaterialCategoryList(r.Context(), by, dir)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentAll(cats, presentMaterialCategory))
}
