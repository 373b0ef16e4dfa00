package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
)

// setOptions is POST /configurator-options/set/new-options: the form field
// options holds a JSON object of override data for the options of the
// token's home configurator. It answers the spec's envelope with the share
// link as data; failures use the same envelope with a 4xx status.
func (h *handler) setOptions(w http.ResponseWriter, r *http.Request) {
	f, err := parseForm(w, r, true)
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	defer cleanup(r)
	raw, ok := f.required("options")
	if err := f.err(); err != nil || !ok {
		writeEnvelopeError(w, r, err)
		return
	}
	options, err := decodeObject(raw)
	if err != nil {
		writeEnvelopeError(w, r, paramErrors{apperr.Field("options", "options must be a JSON object: %v", err)})
		return
	}
	link, err := h.res.Mutation().SetOptionOverrides(r.Context(), options)
	if err != nil {
		writeEnvelopeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentEnvelope(true, "Options saved; the link opens the configurator with them applied", link.URL))
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
	writeJSON(w, http.StatusOK, presentShared(sc))
}

// sharedJSON is a configurator as a share link shows it.
type sharedJSON struct {
	Key     string             `json:"key"`
	ID      int                `json:"id"`
	Name    string             `json:"configurator_name"`
	Options []sharedOptionJSON `json:"options"`
}

// sharedOptionJSON is an option record of the v1 shape whose
// parameter_list has the overrides applied.
type sharedOptionJSON struct {
	optionJSON
	ParameterList []sharedVariationJSON `json:"parameter_list"`
}

// sharedVariationJSON is a variation of the v1 shape plus the model parts
// a material override names.
type sharedVariationJSON struct {
	variationJSON
	SelectedParts []string `json:"selected_parts,omitempty"`
}

func presentShared(sc *model.SharedConfigurator) sharedJSON {
	out := sharedJSON{Key: sc.Key, ID: sc.ID, Name: sc.Name, Options: make([]sharedOptionJSON, len(sc.Options))}
	for i, o := range sc.Options {
		so := sharedOptionJSON{optionJSON: optionJSON{
			ID: o.ID, ConfiguratorID: o.ConfiguratorID, Title: o.Title, Type: string(o.Type), Settings: object(o.Settings),
			Position: o.Position, CreatedAt: timestamp(o.CreatedAt), UpdatedAt: timestamp(o.UpdatedAt), CreatedBy: o.CreatedBy,
		}, ParameterList: make([]sharedVariationJSON, len(o.ParameterList))}
		for j, v := range o.ParameterList {
			so.ParameterList[j] = sharedVariationJSON{variationJSON: variationJSON{
				ID: v.ID, ConfiguratorOptionID: v.ConfiguratorOptionID, Name: v.Name, Position: v.Position, Selected: v.Selected,
				ModelID: v.ModelID, MaterialID: v.MaterialID, MaterialCategoryID: v.MaterialCategoryID,
				TextValue: v.TextValue, CustomColor: v.CustomColor, TextFontSize: v.TextFontSize, TextFontFamily: v.TextFontFamily,
				TextColorCategoryID: v.TextColorCategoryID, NumericalDefault: v.NumericalDefault,
				CreatedAt: timestamp(v.CreatedAt), UpdatedAt: timestamp(v.UpdatedAt),
			}, SelectedParts: v.SelectedParts}
		}
		out.Options[i] = so
	}
	return out
}
