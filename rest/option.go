package rest

import (
	"net/http"

	"github.com/configurator/catalogue/graph/model"
)

// listOptionTypes is GET /configurator-options/types/list.
func (h *handler) listOptionTypes(r *http.Request) (any, error) {
	types, err := h.res.Query().ConfiguratorOptionTypes(r.Context())
	return presentOptionTypes(types), err
}

// optionPage shapes GET /configurator-options: a bare array, paged, like
// the other non-order lists; by default in position order.
func optionPage(p *model.ConfiguratorOptionPage) (any, *model.Pagination) {
	return presentEach(p.Data, presentOption), p.Pagination
}

// listVariations is GET /configurator-option-variations: the variations
// of the option configurator_option_id (required), in position order. An
// option the caller cannot see is 404.
func (h *handler) listVariations(r *http.Request) (any, error) {
	q, err := readQuery(r, nil, "configurator_option_id")
	if err != nil {
		return nil, err
	}
	option := q.requiredID("configurator_option_id")
	if err := q.err(); err != nil {
		return nil, err
	}
	vs, err := h.res.Query().OptionVariationList(r.Context(), option)
	return presentAll(vs, presentVariation), err
}

// listOptionSets is GET /configurator-option-sets: every option set, by
// id, in the spec's {success, message, data} envelope, which its failures
// use too.
func (h *handler) listOptionSets(w http.ResponseWriter, r *http.Request) {
	sets, err := h.res.Query().OptionSetList(r.Context())
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentEnvelope(true, "Option sets retrieved", presentAll(sets, presentOptionSet)))
}
