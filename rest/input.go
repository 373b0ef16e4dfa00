package rest

import (
	"encoding/json"
	"net/http"
	"slices"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// The input of each operation, read from its request as openapi.json
// describes it, into the arguments of the resolver of the same meaning:
// one reader per operation, parameters in the document's order, so a
// reader can follow a route to its handler and its input in one hop.

// The sort columns of the lists, as openapi.json lists them (order_by).
var (
	orderSorts     = sortsOf[ent.OrderOrderField]("created_at", "id", "price", "status", "updated_at")
	materialSorts  = sortsOf[ent.MaterialOrderField]("created_at", "id", "name", "updated_at")
	categorySorts  = sortsOf[ent.MaterialCategoryOrderField]("created_at", "id", "title", "updated_at")
	textureSorts   = sortsOf[ent.TextureOrderField]("created_at", "id", "name", "updated_at")
	formFieldSorts = sortsOf[ent.FormFieldOrderField]("created_at", "id", "position", "title", "updated_at")
	optionSorts    = sortsOf[ent.ConfiguratorOptionOrderField]("created_at", "id", "position", "title", "updated_at")
)

// orderRefusals are the parameters GET /orders refuses: looser order APIs
// take them, and ignoring them would answer another list than was asked.
var orderRefusals = []refusal{
	{"limit", "limit is not supported: use page and per_page"},
	{"offset", "offset is not supported: use page and per_page"},
	{"status", "status is not supported: filtering orders by status is not available; page through them with page and per_page"},
}

// pageOf reads the parameters every page list takes, in the document's
// order: page, per_page, order_by (one of s) and order.
func pageOf[F any](q *params, s sorts[F]) (page, perPage *int, by *F, dir *entgql.OrderDirection) {
	return q.int("page"), q.int("per_page"), sortBy(q, s), q.direction()
}

// ordersArgs reads GET /orders: page, per_page, order_by, order,
// configurator_id, start_date, end_date.
func ordersArgs(r *http.Request) (model.OrdersPageArgs, error) {
	q, err := readQuery(r, orderRefusals, "page", "per_page", "order_by", "order", "configurator_id", "start_date", "end_date")
	if err != nil {
		return model.OrdersPageArgs{}, err
	}
	a := model.OrdersPageArgs{}
	a.Page, a.PerPage, a.OrderBy, a.Order = pageOf(q, orderSorts)
	if id := q.id("configurator_id"); id != nil {
		a.Where = &ent.OrderWhereInput{ConfiguratorID: id}
	}
	a.StartDate, a.EndDate = q.date("start_date"), q.date("end_date")
	return a, q.err()
}

// materialsArgs reads GET /materials: the page's parameters, category_id,
// texture_id.
var materialsArgs = pageArgs(materialSorts, func(q *params) *ent.MaterialWhereInput {
	category, texture := q.id("category_id"), q.id("texture_id")
	if category == nil && texture == nil {
		return nil
	}
	return &ent.MaterialWhereInput{CategoryID: category, TextureID: texture}
}, "category_id", "texture_id")

// texturesArgs reads GET /textures: the page's parameters, category_id.
var texturesArgs = pageArgs(textureSorts, func(q *params) *ent.TextureWhereInput {
	if category := q.id("category_id"); category != nil {
		return &ent.TextureWhereInput{CategoryID: category}
	}
	return nil
}, "category_id")

// pageArgs reads a page list: page, per_page, order_by (one of s) and
// order, then the parameters filters, which where (nil for a list without
// filters: GET /configurator-form-fields and /configurator-options) reads
// into the list's filter.
func pageArgs[W, F any](s sorts[F], where func(*params) *W, filters ...string) func(*http.Request) (model.PageArgs[W, F], error) {
	names := append([]string{"page", "per_page", "order_by", "order"}, filters...)
	return func(r *http.Request) (model.PageArgs[W, F], error) {
		q, err := readQuery(r, nil, names...)
		if err != nil {
			return model.PageArgs[W, F]{}, err
		}
		a := model.PageArgs[W, F]{}
		a.Page, a.PerPage, a.OrderBy, a.Order = pageOf(q, s)
		if where != nil {
			a.Where = where(q)
		}
		return a, q.err()
	}
}

// materialBody is the body of POST /materials and PUT /materials/{id}:
// every field optional in the decoding, so that required and null can be
// told apart from a wrong type, which encoding/json names.
type materialBody struct {
	Name         *string  `json:"name"`
	MaterialFile *string  `json:"material_file"`
	CategoryID   *int     `json:"category_id"`
	TextureID    *int     `json:"texture_id"`
	Status       *bool    `json:"status"`
	MaterialType *string  `json:"material_type"`
	Surface      *string  `json:"surface"`
	Bump         *bool    `json:"bump"`
	Color        *string  `json:"color"`
	Opacity      *float64 `json:"opacity"`
	Specular     *float64 `json:"specular"`
	Reflection   *float64 `json:"reflection"`
	CreatedBy    *string  `json:"created_by"`
}

// field is one field of a body, in the document's order: whether the
// client set it, and its value when it is an id (checked as GraphQL's ID
// scalar does).
type field struct {
	name string
	set  bool
	id   *int
}

// fields are the body's fields in the document's order.
func (b *materialBody) fields() []field {
	return []field{
		{"name", b.Name != nil, nil}, {"material_file", b.MaterialFile != nil, nil},
		{"category_id", b.CategoryID != nil, b.CategoryID}, {"texture_id", b.TextureID != nil, b.TextureID},
		{"status", b.Status != nil, nil}, {"material_type", b.MaterialType != nil, nil}, {"surface", b.Surface != nil, nil},
		{"bump", b.Bump != nil, nil}, {"color", b.Color != nil, nil}, {"opacity", b.Opacity != nil, nil},
		{"specular", b.Specular != nil, nil}, {"reflection", b.Reflection != nil, nil}, {"created_by", b.CreatedBy != nil, nil},
	}
}

// checkFields collects the faults of a decoded body's fields, in order
// (a required field absent or null, an id below 1), and the fields the
// client set to null, which the resolver reads (valid.Nulls).
func checkFields(fields []field, members map[string]json.RawMessage, required ...string) (nulls []string, err error) {
	var errs apperr.List
	for _, f := range fields {
		switch {
		case f.set && f.id != nil:
			if err := valid.Positive(f.name, *f.id); err != nil {
				errs = append(errs, apperr.Errors(err)...)
			}
		case f.set:
		case slices.Contains(required, f.name):
			errs = append(errs, apperr.Field(f.name, "{} is required"))
		case string(members[f.name]) == "null":
			nulls = append(nulls, f.name)
		}
	}
	return nulls, errs.Err()
}

// readMaterial reads a material body: strict JSON (decodeJSON), name
// required when creating, ids 1 or more. The fields the client set to
// null (domain names) are returned for the resolver, which clears what
// can be cleared and refuses the rest (valid.Nulls), as for GraphQL.
func readMaterial(w http.ResponseWriter, r *http.Request, create bool) (materialBody, []string, error) {
	var b materialBody
	members, err := decodeJSON(w, r, &b)
	if err != nil {
		return b, nil, err
	}
	var required []string
	if create {
		required = []string{"name"}
	}
	nulls, err := checkFields(b.fields(), members, required...)
	return b, nulls, err
}

// readMaterialCreate reads POST /materials [Dashboard API]: a JSON object
// of the material's writable fields, name required.
func readMaterialCreate(w http.ResponseWriter, r *http.Request) (ent.CreateMaterialInput, func(), error) {
	b, _, err := readMaterial(w, r, true)
	return ent.CreateMaterialInput{
		Name: deref(b.Name), MaterialFile: b.MaterialFile, CategoryID: b.CategoryID, TextureID: b.TextureID,
		Status: b.Status, MaterialType: b.MaterialType, Surface: b.Surface, Bump: b.Bump, Color: b.Color,
		Opacity: b.Opacity, Specular: b.Specular, Reflection: b.Reflection, CreatedBy: b.CreatedBy,
	}, func() {}, err
}

// readMaterialUpdate reads PUT /materials/{id} [Dashboard API]: the
// fields the body names change, the others stay; null clears
// material_file, category_id and texture_id (the resolver's null rule).
func readMaterialUpdate(w http.ResponseWriter, r *http.Request) (ent.UpdateMaterialInput, []string, func(), error) {
	b, nulls, err := readMaterial(w, r, false)
	return ent.UpdateMaterialInput{
		Name: b.Name, MaterialFile: b.MaterialFile, CategoryID: b.CategoryID, TextureID: b.TextureID,
		Status: b.Status, MaterialType: b.MaterialType, Surface: b.Surface, Bump: b.Bump, Color: b.Color,
		Opacity: b.Opacity, Specular: b.Specular, Reflection: b.Reflection, CreatedBy: b.CreatedBy,
	}, nulls, func() {}, err
}

// orderBody is the JSON body of PATCH /orders/{id}.
type orderBody struct {
	Status          *string `json:"status"`
	InvoiceURL      *string `json:"invoice_url"`
	OrderStorefront *string `json:"order_storefront"`
}

// readOrderUpdate reads PATCH /orders/{id}: a JSON object of status,
// invoice_url and order_storefront, each optional; null clears the last
// two (the resolver reads nulls) and is refused for status.
func readOrderUpdate(w http.ResponseWriter, r *http.Request) (model.UpdateOrderInput, []string, func(), error) {
	var b orderBody
	members, err := decodeJSON(w, r, &b)
	if err != nil {
		return model.UpdateOrderInput{}, nil, func() {}, err
	}
	nulls, err := checkFields([]field{
		{"status", b.Status != nil, nil}, {"invoice_url", b.InvoiceURL != nil, nil}, {"order_storefront", b.OrderStorefront != nil, nil},
	}, members)
	return model.UpdateOrderInput{Status: b.Status, InvoiceURL: b.InvoiceURL, OrderStorefront: b.OrderStorefront}, nulls, func() {}, err
}

// textureJSONBody is the JSON body of PUT /textures/{id}.
type textureJSONBody struct {
	Name       *string `json:"name"`
	CategoryID *int    `json:"category_id"`
}

// readTextureUpdate reads PUT /textures/{id}: multipart/form-data (name,
// file, category_id, bump_file) or a JSON object (name, category_id; null
// clears the category, as the resolver reads nulls). A new file replaces
// the image and its thumbnails.
func readTextureUpdate(w http.ResponseWriter, r *http.Request) (model.UpdateTextureInput, []string, func(), error) {
	switch mediaType(r) {
	case "multipart/form-data":
		fm, err := parseForm(w, r, false)
		if err != nil {
			return model.UpdateTextureInput{}, nil, func() {}, err
		}
		in := model.UpdateTextureInput{}
		if name, ok := fm.text("name"); ok {
			in.Name = &name
		}
		in.File, in.CategoryID, in.BumpFile = fm.file("file"), fm.id("category_id", false), fm.file("bump_file")
		return in, nil, func() { fm.close(r) }, fm.err()
	case "application/json":
		var b textureJSONBody
		members, err := decodeJSON(w, r, &b)
		if err != nil {
			return model.UpdateTextureInput{}, nil, func() {}, err
		}
		nulls, err := checkFields([]field{{"name", b.Name != nil, nil}, {"category_id", b.CategoryID != nil, b.CategoryID}}, members)
		return model.UpdateTextureInput{Name: b.Name, CategoryID: b.CategoryID}, nulls, func() {}, err
	}
	return model.UpdateTextureInput{}, nil, func() {}, unsupported(r, "multipart/form-data", "application/json")
}

// readTextureCreate reads POST /textures: multipart/form-data with name
// and file (required), category_id and bump_file (optional).
func readTextureCreate(w http.ResponseWriter, r *http.Request) (model.CreateTextureInput, func(), error) {
	fm, err := parseForm(w, r, false)
	if err != nil {
		return model.CreateTextureInput{}, func() {}, err
	}
	in := model.CreateTextureInput{}
	in.Name, _ = fm.required("name")
	if f := requiredFile(fm, "file"); f != nil {
		in.File = *f
	}
	in.CategoryID, in.BumpFile = fm.id("category_id", false), fm.file("bump_file")
	return in, func() { fm.close(r) }, fm.err()
}

// readOrder reads POST /orders: multipart/form-data with price,
// customer_details and configurator_summary (JSON objects in text fields),
// configurator_id, and optional configurator_snapshot and
// configurator_print_map images.
func readOrder(w http.ResponseWriter, r *http.Request) (model.CreateOrderInput, func(), error) {
	fm, err := parseForm(w, r, false)
	if err != nil {
		return model.CreateOrderInput{}, func() {}, err
	}
	in := model.CreateOrderInput{Price: fm.float("price"), CustomerDetails: fm.object("customer_details"), ConfiguratorSummary: fm.object("configurator_summary")}
	if id := fm.id("configurator_id", true); id != nil {
		in.ConfiguratorID = *id
	}
	in.ConfiguratorSnapshot, in.ConfiguratorPrintMap = fm.file("configurator_snapshot"), fm.fileArray("configurator_print_map")
	return in, func() { fm.close(r) }, fm.err()
}

// readOverrides reads POST /configurator-options/set/new-options: the
// form field options (multipart or urlencoded), a JSON object.
func readOverrides(w http.ResponseWriter, r *http.Request) (json.RawMessage, func(), error) {
	fm, err := parseForm(w, r, true)
	if err != nil {
		return nil, func() {}, err
	}
	return fm.object("options"), func() { fm.close(r) }, fm.err()
}

// requiredFile reads a file field the operation cannot do without.
func requiredFile(fm *form, name string) *graphql.Upload {
	u := fm.file(name)
	if u == nil && len(fm.files[name]) == 0 && len(fm.values[name]) == 0 {
		fm.fail(name, "{} is required")
	}
	return u
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
