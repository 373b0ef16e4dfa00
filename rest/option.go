package rest

import (
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// optionSorts are the order_by values of the option list.
var optionSorts = sortable(
	ent.ConfiguratorOptionOrderFieldID, ent.ConfiguratorOptionOrderFieldCreatedAt,
	ent.ConfiguratorOptionOrderFieldUpdatedAt, ent.ConfiguratorOptionOrderFieldTitle,
	ent.ConfiguratorOptionOrderFieldPosition,
)

// listOptionTypes is GET /configurator-options/types/list.
func (h *handler) listOptionTypes(w http.ResponseWriter, r *http.Request) {
	types, err := h.res.Query().ConfiguratorOptionTypes(r.Context())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentOptionTypes(types))
}

// listOptions is GET /configurator-options: a bare array, paged, like the
// other non-order lists; by default in position order.
func (h *handler) listOptions(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	page, perPage := p.page()
	by, dir := sortBy(p, optionSorts), p.direction()
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().ConfiguratorOptionsPage(r.Context(), model.ConfiguratorOptionsPageArgs{Page: page, PerPage: perPage, OrderBy: by, Order: dir})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, presentAll(res.Data, presentOption), res.Pagination, h.linksOf(p.q, "/configurator-options", res.Pagination))
}

// listVariations is GET /configurator-option-variations: the variations
// of the option configurator_option_id (required), in position order. An
// option the caller cannot see is 404.
func (h *handler) listVariations(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	p.require("configurator_option_id")
	optionID := p.id("configurator_option_id")
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	vs, err := h.res.Query().OptionVariationList(r.Context(), *optionID)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentAll(vs, presentVariation))
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
	writeJSON(w, http.StatusOK, presentEnvelope(true, "Option sets retrieved", presentAll(sets, presentOptionSet)))
}
