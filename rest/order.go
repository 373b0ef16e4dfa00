package rest

import (
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
)

// orderSorts are the order_by values of the order list.
var orderSorts = sortable(
	ent.OrderOrderFieldID, ent.OrderOrderFieldCreatedAt, ent.OrderOrderFieldUpdatedAt,
	ent.OrderOrderFieldPrice, ent.OrderOrderFieldStatus,
)

// orderLoose are the parameters of the spec's looser description of the
// order list, which the contract does not have: refusing them beats
// silently returning an unfiltered first page.
var orderLoose = map[string]string{
	"limit":  "limit is not supported: use page and per_page",
	"offset": "offset is not supported: use page and per_page",
	"status": "status is not supported: filtering orders by status is not available; page through them with page and per_page",
}

// listOrders is GET /orders: a page of orders in the data and pagination
// envelope. start_date and end_date are inclusive UTC days.
func (h *handler) listOrders(w http.ResponseWriter, r *http.Request) {
	p := newParams(r)
	p.unsupported(orderLoose)
	page, perPage := p.page()
	by, dir := sortBy(p, orderSorts), p.direction()
	configuratorID := p.id("configurator_id")
	start, end := p.date("start_date"), p.date("end_date")
	if err := p.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().OrdersPage(r.Context(), model.OrdersPageArgs{
		Where: &ent.OrderWhereInput{ConfiguratorID: configuratorID},
		Page:  page, PerPage: perPage, OrderBy: by, Order: dir, StartDate: start, EndDate: end,
	})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentOrderPage(res, h.linksOf(p.q, "/orders", res.Pagination)))
}
