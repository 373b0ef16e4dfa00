package rest

import (
	"net/http"

	"github.com/configurator/catalogue/graph/model"
)

// listOptionTypes is GET /configurator-options/types/list.
func (h *handler) listOptionTypes(w http.ResponseWriter, r *http.Request, _ struct{}) {
	types, err := h.res.Query().ConfiguratorOptionTypes(r.Context())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentOptionTypes(types))
}

// listOptions is GET /configurator-options: a bare array, paged, like the
// other non-order lists; by default in position order.
func (h *handler) listOptions(w http.ResponseWriter, r *http.Request, args model.ConfiguratorOptionsPageArgs) {
	res, err := h.res.Query().ConfiguratorOptionsPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentOption), res.Pagination, h.linksOf(r, "/configurator-options", res.Pagination))
}

// listVariations is GET /configurator-option-variations: the variations
// of the option configurator_option_id (required), in position order. An
// option the caller cannot see is 404.
func (h *handler) listVariations(w http.ResponseWriter, r *http.Request, args struct{ ConfiguratorOptionID int }) {
	vs, err := h.res.Query().OptionVariationList(r.Context(), args.ConfiguratorOptionID)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentAll(vs, presentVariation))
}

// listOptionSets is GET /configurator-option-sets: every option set, by
// id, in the spec's {success, message, data} envelope, which its failures
// use too.
func (h *handler) listOptionSets(w http.ResponseWriter, r *http.Request, _ struct{}) {
	sets, err := h.res.Query().OptionSetList(r.Context())
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentEnvelope(true, "Option sets retrieved", presentAll(sets, presentOptionSet)))
}
