package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/share"
)

// This file alone knows the v1 JSON: snake_case names, RFC 3339 UTC
// timestamps (seconds), nulls for absent optional values, and the
// envelopes of the spec.

// timestamp formats a time as v1 shows it: RFC 3339 in UTC, in seconds.
// Every record carries two, so the years 0 to 9999 (all but the
// impossible) are written here from the date and clock, which costs a
// tenth of Format's parsing of its layout; what Format writes for them,
// which a test checks on every hour, minute and second and on many dates.
func timestamp(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(time.RFC3339)
	}
	hour, minute, second := t.Clock()
	b := [20]byte{
		byte('0' + year/1000), byte('0' + year/100%10), byte('0' + year/10%10), byte('0' + year%10), '-',
		byte('0' + month/10), byte('0' + month%10), '-', byte('0' + day/10), byte('0' + day%10), 'T',
		byte('0' + hour/10), byte('0' + hour%10), ':', byte('0' + minute/10), byte('0' + minute%10), ':',
		byte('0' + second/10), byte('0' + second%10), 'Z',
	}
	return string(b[:])
}

// categoryTimestamp is the YYYY-MM-DD HH:MM:SS (UTC) form the spec's
// material-category sample uses.
func categoryTimestamp(t time.Time) string { return t.UTC().Format(time.DateTime) }

// orderJSON is an order, in the list and on its own.
type orderJSON struct {
	ID                   int                   `json:"id"`
	Price                float64               `json:"price"`
	Status               string                `json:"status"`
	CustomerDetails      json.RawMessage       `json:"customer_details"`
	ConfiguratorSummary  json.RawMessage       `json:"configurator_summary"`
	ConfiguratorSnapshot *string               `json:"configurator_snapshot"`
	ConfiguratorPrintMap []string              `json:"configurator_print_map"`
	InvoiceURL           *string               `json:"invoice_url"`
	OrderStorefront      *string               `json:"order_storefront"`
	CreatedAt            string                `json:"created_at"`
	UpdatedAt            string                `json:"updated_at"`
	Configurator         orderConfiguratorJSON `json:"configurator"`
}

type orderConfiguratorJSON struct {
	ID   int    `json:"id"`
	Name string `json:"configurator_name"`
}

// presentOrder presents an order. Its configurator's name comes with it
// (query.ConfiguratorName); without it configurator_name is empty.
func presentOrder(o *ent.Order) orderJSON {
	conf := orderConfiguratorJSON{ID: o.ConfiguratorID, Name: query.ConfiguratorName(o)}
	return orderJSON{
		ID:                   o.ID,
		Price:                o.Price,
		Status:               o.Status,
		CustomerDetails:      object(o.CustomerDetails),
		ConfiguratorSummary:  object(o.ConfiguratorSummary),
		ConfiguratorSnapshot: o.ConfiguratorSnapshot,
		ConfiguratorPrintMap: list(o.ConfiguratorPrintMap),
		InvoiceURL:           o.InvoiceURL,
		OrderStorefront:      o.OrderStorefront,
		CreatedAt:            timestamp(o.CreatedAt),
		UpdatedAt:            timestamp(o.UpdatedAt),
		Configurator:         conf,
	}
}

// orderPageJSON is the order list: the spec's data and pagination
// envelope (Laravel's paginator).
type orderPageJSON struct {
	// Data is the page's orders as orderJSON (presentEach).
	Data       records        `json:"data"`
	Pagination paginationJSON `json:"pagination"`
}

type paginationJSON struct {
	CurrentPage int     `json:"current_page"`
	PerPage     int     `json:"per_page"`
	Total       int     `json:"total"`
	LastPage    int     `json:"last_page"`
	NextPageURL *string `json:"next_page_url"`
	PrevPageURL *string `json:"prev_page_url"`
}

func presentOrderPage(p *model.OrderPage, links pageLinks) orderPageJSON {
	return orderPageJSON{
		Data: presentEach(p.Data, presentOrder),
		Pagination: paginationJSON{
			CurrentPage: p.Pagination.CurrentPage,
			PerPage:     p.Pagination.PerPage,
			Total:       p.Pagination.Total,
			LastPage:    p.Pagination.LastPage,
			NextPageURL: links.next,
			PrevPageURL: links.prev,
		},
	}
}

// materialJSON is a material.
type materialJSON struct {
	ID           int     `json:"id"`
	Name         string  `json:"name"`
	MaterialFile *string `json:"material_file"`
	CategoryID   *int    `json:"category_id"`
	TextureID    *int    `json:"texture_id"`
	Status       bool    `json:"status"`
	MaterialType string  `json:"material_type"`
	Surface      string  `json:"surface"`
	Bump         bool    `json:"bump"`
	Color        string  `json:"color"`
	Opacity      float64 `json:"opacity"`
	Specular     float64 `json:"specular"`
	Reflection   float64 `json:"reflection"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
	CreatedBy    string  `json:"created_by"`
}

func presentMaterial(m *ent.Material) materialJSON {
	return materialJSON{
		ID:           m.ID,
		Name:         m.Name,
		MaterialFile: m.MaterialFile,
		CategoryID:   m.CategoryID,
		TextureID:    m.TextureID,
		Status:       m.Status,
		MaterialType: m.MaterialType,
		Surface:      m.Surface,
		Bump:         m.Bump,
		Color:        m.Color,
		Opacity:      m.Opacity,
		Specular:     m.Specular,
		Reflection:   m.Reflection,
		CreatedAt:    timestamp(m.CreatedAt),
		UpdatedAt:    timestamp(m.UpdatedAt),
		CreatedBy:    m.CreatedBy,
	}
}

// materialCategoryJSON is a material category; its timestamps use the
// spec sample's YYYY-MM-DD HH:MM:SS form.
type materialCategoryJSON struct {
	ID          int    `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
	CreatedBy   string `json:"created_by"`
}

func presentMaterialCategory(c *ent.MaterialCategory) materialCategoryJSON {
	return materialCategoryJSON{
		ID:          c.ID,
		Title:       c.Title,
		Description: c.Description,
		CreatedAt:   categoryTimestamp(c.CreatedAt),
		UpdatedAt:   categoryTimestamp(c.UpdatedAt),
		CreatedBy:   c.CreatedBy,
	}
}

// textureJSON is a texture.
type textureJSON struct {
	ID                  int     `json:"id"`
	Name                string  `json:"name"`
	TextureFile         *string `json:"texture_file"`
	TextureThumbnail50  *string `json:"texture_thumbnail_50"`
	TextureThumbnail100 *string `json:"texture_thumbnail_100"`
	BumpFile            *string `json:"bump_file"`
	CategoryID          *int    `json:"category_id"`
	CreatedAt           string  `json:"created_at"`
	UpdatedAt           string  `json:"updated_at"`
}

func presentTexture(t *ent.Texture) textureJSON {
	return textureJSON{
		ID:                  t.ID,
		Name:                t.Name,
		TextureFile:         t.TextureFile,
		TextureThumbnail50:  t.TextureThumbnail50,
		TextureThumbnail100: t.TextureThumbnail100,
		BumpFile:            t.BumpFile,
		CategoryID:          t.CategoryID,
		CreatedAt:           timestamp(t.CreatedAt),
		UpdatedAt:           timestamp(t.UpdatedAt),
	}
}

// formJSON is a configurator form.
type formJSON struct {
	ID             int    `json:"id"`
	ConfiguratorID int    `json:"configurator_id"`
	EnableForm     bool   `json:"enable_form"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

func presentForm(f *ent.ConfiguratorForm) formJSON {
	return formJSON{
		ID:             f.ID,
		ConfiguratorID: f.ConfiguratorID,
		EnableForm:     f.EnableForm,
		CreatedAt:      timestamp(f.CreatedAt),
		UpdatedAt:      timestamp(f.UpdatedAt),
	}
}

// formFieldJSON is a configurator form field; settings stays the
// JSON-encoded string the spec declares.
type formFieldJSON struct {
	ID              int    `json:"id"`
	ConfiguratorID  int    `json:"configurator_id"`
	FormID          *int   `json:"form_id"`
	Title           string `json:"title"`
	Type            string `json:"type"`
	MandatoryStatus string `json:"mandatory_status"`
	Description     string `json:"description"`
	URL             string `json:"url"`
	Settings        string `json:"settings"`
	ShowTitle       int    `json:"show_title"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

func presentFormField(f *ent.FormField) formFieldJSON {
	return formFieldJSON{
		ID:              f.ID,
		ConfiguratorID:  f.ConfiguratorID,
		FormID:          f.FormID,
		Title:           f.Title,
		Type:            f.Type,
		MandatoryStatus: f.MandatoryStatus,
		Description:     f.Description,
		URL:             f.URL,
		Settings:        f.Settings,
		ShowTitle:       f.ShowTitle,
		CreatedAt:       timestamp(f.CreatedAt),
		UpdatedAt:       timestamp(f.UpdatedAt),
	}
}

// optionTypesJSON is the list of option types.
type optionTypesJSON struct {
	OptionTypes []string `json:"optionTypes"`
}

func presentOptionTypes[T ~string](types []T) optionTypesJSON {
	return optionTypesJSON{OptionTypes: presentAll(types, func(t T) string { return string(t) })}
}

// optionJSON is a configurator option with its variations as its
// parameter_list.
type optionJSON struct {
	ID             int             `json:"id"`
	ConfiguratorID int             `json:"configurator_id"`
	Title          string          `json:"title"`
	Type           string          `json:"type"`
	Settings       json.RawMessage `json:"settings"`
	ParameterList  []variationJSON `json:"parameter_list"`
	Position       int             `json:"position"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	CreatedBy      string          `json:"created_by"`
}

// presentOption presents an option whose variations edge is loaded (the
// resolvers load it, in position order: the data layer orders every
// read of variations).
func presentOption(o *ent.ConfiguratorOption) optionJSON {
	return optionJSON{
		ID:             o.ID,
		ConfiguratorID: o.ConfiguratorID,
		Title:          o.Title,
		Type:           string(o.Type),
		Settings:       object(o.Settings),
		ParameterList:  presentAll(o.Edges.Variations, presentVariation),
		Position:       o.Position,
		CreatedAt:      timestamp(o.CreatedAt),
		UpdatedAt:      timestamp(o.UpdatedAt),
		CreatedBy:      o.CreatedBy,
	}
}

// variationJSON is an option variation, an entry of a parameter_list.
// The fields an option type does not use are null.
type variationJSON struct {
	ID                   int     `json:"id"`
	ConfiguratorOptionID int     `json:"configurator_option_id"`
	Name                 string  `json:"name"`
	Position             int     `json:"position"`
	Selected             bool    `json:"selected"`
	ModelID              *int    `json:"model_id"`
	MaterialID           *int    `json:"material_id"`
	MaterialCategoryID   *int    `json:"material_category_id"`
	TextValue            *string `json:"text_value"`
	CustomColor          *bool   `json:"custom_color"`
	TextFontSize         *string `json:"text_font_size"`
	TextFontFamily       *string `json:"text_font_family"`
	TextColorCategoryID  *int    `json:"text_color_category_id"`
	NumericalDefault     *int    `json:"numerical_default"`
	CreatedAt            string  `json:"created_at"`
	UpdatedAt            string  `json:"updated_at"`
}

func presentVariation(v *ent.OptionVariation) variationJSON {
	return variationJSON{
		ID:                   v.ID,
		ConfiguratorOptionID: v.ConfiguratorOptionID,
		Name:                 v.Name,
		Position:             v.Position,
		Selected:             v.Selected,
		ModelID:              v.ModelID,
		MaterialID:           v.MaterialID,
		MaterialCategoryID:   v.MaterialCategoryID,
		TextValue:            v.TextValue,
		CustomColor:          v.CustomColor,
		TextFontSize:         v.TextFontSize,
		TextFontFamily:       v.TextFontFamily,
		TextColorCategoryID:  v.TextColorCategoryID,
		NumericalDefault:     v.NumericalDefault,
		CreatedAt:            timestamp(v.CreatedAt),
		UpdatedAt:            timestamp(v.UpdatedAt),
	}
}

// optionSetJSON is an option set; options are the ids of its options in
// their position order.
type optionSetJSON struct {
	ID             int    `json:"id"`
	ConfiguratorID int    `json:"configurator_id"`
	Name           string `json:"name"`
	Options        []int  `json:"options"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

func presentOptionSet(s *ent.OptionSet) optionSetJSON {
	return optionSetJSON{
		ID:             s.ID,
		ConfiguratorID: s.ConfiguratorID,
		Name:           s.Name,
		Options:        presentAll(s.Edges.Options, func(o *ent.ConfiguratorOption) int { return o.ID }),
		CreatedAt:      timestamp(s.CreatedAt),
		UpdatedAt:      timestamp(s.UpdatedAt),
	}
}

// envelopeJSON is the spec's {success, message, data} reply of the
// option-set and override endpoints.
type envelopeJSON struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// presentEnvelope wraps data (nil for null) in the spec's envelope.
func presentEnvelope(success bool, message string, data any) envelopeJSON {
	return envelopeJSON{Success: success, Message: message, Data: data}
}

// presentAll presents every item, as a JSON array even when empty.
func presentAll[T, J any](items []T, present func(T) J) []J {
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = present(it)
	}
	return out
}

// emptyObject is the JSON of an absent object.
var emptyObject = json.RawMessage("{}")

// object is raw, a stored JSON object, or an empty object when there is
// none.
func object(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return emptyObject
	}
	return raw
}

// list is xs, or an empty array for nil.
func list(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// pageLinks are the absolute URLs of the neighbouring pages, nil where
// there is none.
type pageLinks struct{ next, prev *string }

// linksOf computes the neighbours of a page of the list at path. They keep
// every query parameter the client sent (re-encoded, sorted by name) and
// change only page. There is no next page on the last page nor past it,
// and no neighbour at all when per_page is -1 (everything is on one
// page). Past the end, prev points at the last page rather than at
// another empty page.
func (h *handler) linksOf(r *http.Request, path string, pg *model.Pagination) pageLinks {
	var l pageLinks
	if pg.PerPage < 0 {
		return l
	}
	var v url.Values // the query, parsed once for both links
	at := func(page int) *string {
		if v == nil {
			v = r.URL.Query()
		}
		v.Set("page", strconv.Itoa(page))
		s := h.base + path + "?" + v.Encode()
		return &s
	}
	if pg.CurrentPage < pg.LastPage {
		l.next = at(pg.CurrentPage + 1)
	}
	if pg.CurrentPage > 1 {
		l.prev = at(min(pg.CurrentPage-1, pg.LastPage))
	}
	return l
}

// writePage answers a page of a list whose v1 shape is a bare array: the
// page arithmetic travels in X-Total-Count and an RFC 8288 Link header.
// items is the presented list: presentEach for the shapes with an
// appender, presentAll for the others.
func writePage(w http.ResponseWriter, r *http.Request, items any, pg *model.Pagination, links pageLinks) {
	w.Header().Set("X-Total-Count", strconv.Itoa(pg.Total))
	var link []string
	if links.next != nil {
		link = append(link, "<"+*links.next+`>; rel="next"`)
	}
	if links.prev != nil {
		link = append(link, "<"+*links.prev+`>; rel="prev"`)
	}
	if len(link) > 0 {
		w.Header().Set("Link", strings.Join(link, ", "))
	}
	writeJSON(w, r, http.StatusOK, items)
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

func presentShared(sc *share.Configurator) sharedJSON {
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

// EventData presents the record of an event (internal/events) in its v1
// shape, as webhook payloads carry it: an order as GET /orders/{id}
// shows it, a material or a texture as their lists do.
func EventData(resource any) any {
	switch r := resource.(type) {
	case *ent.Order:
		return presentOrder(r)
	case *ent.Material:
		return presentMaterial(r)
	case *ent.Texture:
		return presentTexture(r)
	}
	return resource
}
