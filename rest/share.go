package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// setOptions is POST /configurator-options/set/new-options: the form field
// options holds a JSON object of override data for the options of the
// token's home configurator. It answers the spec's envelope with the share
// link as data; failures use the same envelope with a 4xx status.
func (h *handler) setOptions(w http.ResponseWriter, r *http.Request) {
	options, done, err := readOverrides(w, r)
	defer done()
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	link, err := h.res.Mutation().SetOptionOverrides(r.Context(), options)
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentEnvelope(true, "Options saved; the link opens the configurator with them applied", link.URL))
}

// getShared is GET /shared/{key}: the configurator behind a share link,
// read without a token (the key is the credential) and with the link's
// overrides applied. Front-ends on other origins read it, so it allows
// any origin; it carries no credentials.
func (h *handler) getShared(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	sc, err := h.res.Query().SharedConfigurator(r.Context(), chi.URLParam(r, "key"))
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentShared(sc))
}
