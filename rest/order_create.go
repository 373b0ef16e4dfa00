package rest

import (
	"fmt"
	"net/http"

	"github.com/configurator/catalogue/graph/model"
)

// createOrder is POST /orders: multipart/form-data with price,
// customer_details and configurator_summary (JSON objects in strings),
// configurator_id, and optional configurator_snapshot and
// configurator_print_map images. It answers 201 with the order and its
// Location.
func (h *handler) createOrder(w http.ResponseWriter, r *http.Request, args struct{ Input model.CreateOrderInput }) {
	o, err := h.res.Mutation().CreateOrder(r.Context(), args.Input)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/orders/%d", h.base, o.ID))
	writeJSON(w, http.StatusCreated, presentOrder(o))
}
