package rest

import (
	"fmt"
	"net/http"

	"github.com/configurator/catalogue/internal/valid"
)

// listOrders is GET /orders: a page of orders in the data and pagination
// envelope. start_date and end_date are inclusive UTC days.
func (h *handler) listOrders(w http.ResponseWriter, r *http.Request) {
	args, err := ordersArgs(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().OrdersPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentOrderPage(res, h.linksOf(r, "/orders", res.Pagination)))
}

// createOrder is POST /orders: multipart/form-data with price,
// customer_details and configurator_summary (JSON objects in strings),
// configurator_id, and optional configurator_snapshot and
// configurator_print_map images. It answers 201 with the order and its
// Location.
func (h *handler) createOrder(w http.ResponseWriter, r *http.Request) {
	in, done, err := readOrder(w, r)
	defer done()
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	o, err := h.res.Mutation().CreateOrder(r.Context(), in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/orders/%d", h.base, o.ID))
	writeJSON(w, r, http.StatusCreated, presentOrder(o))
}

// updateOrder is PATCH /orders/{id} [Dashboard API]: a JSON object of
// status, invoice_url and order_storefront; the fields it names change.
// 200 with the order.
func (h *handler) updateOrder(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	in, nulls, err := readOrderUpdate(w, r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	o, err := h.res.Mutation().UpdateOrder(valid.WithNulls(r.Context(), nulls), id, in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentOrder(o))
}
