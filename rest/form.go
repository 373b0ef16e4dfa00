package rest

import (
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// formFieldSorts are the order_by values of the form-field list.
var formFieldSorts = sortable(
	ent.FormFieldOrderFieldID, ent.FormFieldOrderFieldCreatedAt, ent.FormFieldOrderFieldUpdatedAt,
	ent.FormFieldOrderFieldTitle, ent.FormFieldOrderFieldPosition,
)

// listForms is GET /configurator-forms: every form, by id. The spec gives
// it no parameters.
func (h *handler) listForms(w http.ResponseWriter, r *http.Request) {
	forms, err := h.res.Query().ConfiguratorFormList(r.Context())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentAll(forms, presentForm))
}

// listFormFields is GET /configurator-form-fields: a bare array, paged.
func (h *handler) listFormFields(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	page, perPage := p.page()
	by, dir := sortBy(p, formFieldSorts), p.direction()
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().FormFieldsPage(r.Context(), model.FormFieldsPageArgs{Page: page, PerPage: perPage, OrderBy: by, Order: dir})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentFormField), res.Pagination, h.linksOf(p.q, "/configurator-form-fields", res.Pagination))
}
