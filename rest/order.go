package rest

import "net/http"

// listOrders is GET /orders: a page of orders in the data and pagination
// envelope. start_date and end_date are inclusive UTC days.
func (h *handler) listOrders(r *http.Request) (any, error) {
	args, err := ordersArgs(r)
	if err != nil {
		return nil, err
	}
	res, err := h.res.Query().OrdersPage(r.Context(), args)
	if err != nil {
		return nil, err
	}
	return presentOrderPage(res, h.linksOf(r, "/orders", res.Pagination)), nil
}
