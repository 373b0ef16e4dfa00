package rest

import "net/http"

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
