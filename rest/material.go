package rest

import (
	"net/http"
)

// listMaterials is GET /materials: a bare array, paged.
func (h *handler) listMaterials(w http.ResponseWriter, r *http.Request) {
	args, err := materialsArgs(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().MaterialsPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, r, presentEach(res.Data, presentMaterial), res.Pagination, h.linksOf(r, "/materials", res.Pagination))
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
