package rest

import (
	"net/http"
)

// listForms is GET /configurator-forms: every form, by id. The spec gives
// it no parameters.
func (h *handler) listForms(w http.ResponseWriter, r *http.Request) {
	forms, err := h.res.Query().ConfiguratorFormList(r.Context())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentAll(forms, presentForm))
}

// listFormFields is GET /configurator-form-fields: a bare array, paged.
func (h *handler) listFormFields(w http.ResponseWriter, r *http.Request) {
	args, err := formFieldsArgs(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().FormFieldsPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, r, presentAll(res.Data, presentFormField), res.Pagination, h.linksOf(r, "/configurator-form-fields", res.Pagination))
}
