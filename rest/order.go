package rest

import (
	"fmt"
	"net/http"
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
	writeJSON(w, http.StatusOK, presentOrderPage(res, h.linksOf(r, "/orders", res.Pagination)))
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
	writeJSON(w, http.StatusCreated, presentOrder(o))
}
