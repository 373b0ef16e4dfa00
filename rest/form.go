package rest

import (
	"net/http"

	"github.com/configurator/catalogue/graph/model"
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

// formFieldPage shapes GET /configurator-form-fields: a bare array, paged.
func formFieldPage(p *model.FormFieldPage) (any, *model.Pagination) {
	return presentAll(p.Data, presentFormField), p.Pagination
}
