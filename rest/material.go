package rest

import (
	"net/http"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// listMaterials is GET /materials: a bare array, paged.
func (h *handler) listMaterials(w http.ResponseWriter, r *http.Request, args model.MaterialsPageArgs) {
	res, err := h.res.Query().MaterialsPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentMaterial), res.Pagination, h.linksOf(r, "/materials", res.Pagination))
}

// listMaterialCategories is GET /materials-categories/list: every
// category, by default newest first; the list has no pagination.
func (h *handler) listMaterialCategories(w http.ResponseWriter, r *http.Request, args struct {
	OrderBy *ent.MaterialCategoryOrderField
	Order   *entgql.OrderDirection
}) {
	cats, err := h.res.Query().MaterialCategoryList(r.Context(), args.OrderBy, args.Order)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentAll(cats, presentMaterialCategory))
}
