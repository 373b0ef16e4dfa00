package rest

import (
	"net/http"

	"github.com/configurator/catalogue/graph/model"
)

// listForms is GET /configurator-forms: every form, by id. The spec gives
// it no parameters.
func (h *handler) listForms(r *http.Request) (any, error) {
	forms, err := h.res.Query().ConfiguratorFormList(r.Context())
	return presentAll(forms, presentForm), err
}

// formFieldPage shapes GET /configurator-form-fields: a bare array, paged.
func formFieldPage(p *model.FormFieldPage) (any, *model.Pagination) {
	return presentAll(p.Data, presentFormField), p.Pagination
}
