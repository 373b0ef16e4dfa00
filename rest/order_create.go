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
func (h *handler) createOrder(w http.ResponseWriter, r *http.Request) {
	f, err := parseForm(w, r, false)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	defer f.close(r)
	in, err := readOrder(f)
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

// readOrder reads the fields of a new order from its form, collecting
// every fault; the values' bounds are the resolver's (valid.Order).
func readOrder(f *form) (model.CreateOrderInput, error) {
	in := model.CreateOrderInput{
		Price:                f.float("price"),
		CustomerDetails:      f.object("customer_details"),
		ConfiguratorSummary:  f.object("configurator_summary"),
		ConfiguratorSnapshot: f.file("configurator_snapshot"),
		ConfiguratorPrintMap: f.fileArray("configurator_print_map"),
	}
	if id := f.id("configurator_id", true); id != nil {
		in.ConfiguratorID = *id
	}
	return in, f.err()
}
