package rest

import (
	"fmt"
	"net/http"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
)

// materialBody is the JSON body of POST /materials: the fields of the
// material resource that a client sets (id and timestamps are the
// server's).
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

// createMaterial is POST /materials [Dashboard API]: 201 with the material.
func (h *handler) createMaterial(w http.ResponseWriter, r *http.Request) {
	var b materialBody
	if _, err := decodeJSON(w, r, &b); err != nil {
		writeProblem(w, r, err)
		return
	}
	var errs apperr.List
	if b.Name == nil {
		errs = append(errs, apperr.Field("name", "{} is required"))
	}
	if errs = append(errs, badIDs(idField{"category_id", b.CategoryID}, idField{"texture_id", b.TextureID})...); len(errs) > 0 {
		writeProblem(w, r, errs)
		return
	}
	m, err := h.res.Mutation().CreateMaterial(r.Context(), ent.CreateMaterialInput{
		Name: *b.Name, MaterialFile: b.MaterialFile, CategoryID: b.CategoryID, TextureID: b.TextureID,
		Status: b.Status, MaterialType: b.MaterialType, Surface: b.Surface, Bump: b.Bump, Color: b.Color,
		Opacity: b.Opacity, Specular: b.Specular, Reflection: b.Reflection, CreatedBy: b.CreatedBy,
	})
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/materials/%d", h.base, m.ID))
	writeJSON(w, http.StatusCreated, presentMaterial(m))
}

// updateMaterial is PUT /materials/{id} [Dashboard API]: the fields the
// body names change, the others stay; null clears material_file,
// category_id and texture_id. 200 with the material.
func (h *handler) updateMaterial(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	var b materialBody
	raw, err := decodeJSON(w, r, &b)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	isNull := func(k string) bool { v, ok := raw[k]; return ok && string(v) == "null" }
	in := ent.UpdateMaterialInput{
		Name: b.Name, MaterialFile: b.MaterialFile, CategoryID: b.CategoryID, TextureID: b.TextureID,
		Status: b.Status, MaterialType: b.MaterialType, Surface: b.Surface, Bump: b.Bump, Color: b.Color,
		Opacity: b.Opacity, Specular: b.Specular, Reflection: b.Reflection, CreatedBy: b.CreatedBy,
		ClearMaterialFile: isNull("material_file"), ClearCategory: isNull("category_id"), ClearTexture: isNull("texture_id"),
	}
	var errs apperr.List
	for _, k := range []string{"name", "status", "material_type", "surface", "bump", "color", "opacity", "specular", "reflection", "created_by"} {
		if isNull(k) {
			errs = append(errs, apperr.Field(k, "{} cannot be null"))
		}
	}
	if errs = append(errs, badIDs(idField{"category_id", b.CategoryID}, idField{"texture_id", b.TextureID})...); len(errs) > 0 {
		writeProblem(w, r, errs)
		return
	}
	m, err := h.res.Mutation().UpdateMaterial(r.Context(), id, in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentMaterial(m))
}

// idField is a reference to another record in a JSON body.
type idField struct {
	name string
	id   *int
}

// badIDs refuses references that are not positive integers: no record has
// such an id, so the body is at fault (400 naming the field) rather than a
// record missing (404). Form bodies check the same in form.id.
func badIDs(fields ...idField) apperr.List {
	var errs apperr.List
	for _, f := range fields {
		if f.id != nil && *f.id < 1 {
			errs = append(errs, apperr.Field(f.name, "{} must be a positive integer, got %d", *f.id))
		}
	}
	return errs
}

// deletedJSON confirms a deletion.
type deletedJSON struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	ID      int    `json:"id"`
}

// deleted presents the confirmation of DELETE /{what}s/{id}
// [Dashboard API], served by byID over the delete mutation.
func deleted(what string) func(int) deletedJSON {
	return func(id int) deletedJSON {
		return deletedJSON{Status: "success", Message: fmt.Sprintf("%s %d deleted", what, id), ID: id}
	}
}

// textureCreatedJSON is the answer to POST /textures: a status and the id.
type textureCreatedJSON struct {
	Status  string      `json:"status"`
	ID      int         `json:"id"`
	Texture textureJSON `json:"texture"`
}

// createTexture is POST /textures [Dashboard API]: multipart/form-data
// with name and file (required), category_id and bump_file (optional).
// 201 with the status, the id and the texture.
func (h *handler) createTexture(w http.ResponseWriter, r *http.Request) {
	f, err := parseForm(w, r, false)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	defer f.close(r)
	name, _ := f.required("name")
	in := model.CreateTextureInput{Name: name, CategoryID: f.id("category_id", false), BumpFile: f.file("bump_file")}
	if file := f.file("file"); file != nil {
		in.File = *file
	} else if len(f.files["file"]) == 0 && len(f.values["file"]) == 0 {
		f.fail("file", "{} is required")
	}
	if err := f.err(); err != nil {
		writeProblem(w, r, err)
		return
	}
	t, err := h.res.Mutation().CreateTexture(r.Context(), in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/textures/%d", h.base, t.ID))
	writeJSON(w, http.StatusCreated, textureCreatedJSON{Status: "success", ID: t.ID, Texture: presentTexture(t)})
}

// textureBody is the JSON body of PUT /textures/{id}; files change only
// through multipart.
type textureBody struct {
	Name       *string `json:"name"`
	CategoryID *int    `json:"category_id"`
}

// updateTexture is PUT /textures/{id} [Dashboard API]: multipart/form-data
// (name, file, category_id, bump_file) or a JSON object (name,
// category_id; null clears the category). A new file replaces the image
// and its thumbnails. 200 with the texture.
func (h *handler) updateTexture(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	var in model.UpdateTextureInput
	if mediaType(r) == "application/json" {
		var b textureBody
		raw, err := decodeJSON(w, r, &b)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		var errs apperr.List
		if v, ok := raw["name"]; ok && string(v) == "null" {
			errs = append(errs, apperr.Field("name", "{} cannot be null"))
		}
		if errs = append(errs, badIDs(idField{"category_id", b.CategoryID})...); len(errs) > 0 {
			writeProblem(w, r, errs)
			return
		}
		clear := string(raw["category_id"]) == "null"
		in = model.UpdateTextureInput{Name: b.Name, CategoryID: b.CategoryID, ClearCategory: &clear}
	} else {
		f, err := parseForm(w, r, false)
		if err != nil {
			writeProblem(w, r, unsupportedOr(r, err, "multipart/form-data", "application/json"))
			return
		}
		defer f.close(r)
		if name, ok := f.text("name"); ok {
			in.Name = &name
		}
		in.CategoryID, in.File, in.BumpFile = f.id("category_id", false), f.file("file"), f.file("bump_file")
		if err := f.err(); err != nil {
			writeProblem(w, r, err)
			return
		}
	}
	t, err := h.res.Mutation().UpdateTexture(r.Context(), id, in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentTexture(t))
}

// unsupportedOr names every accepted media type in a 415.
func unsupportedOr(r *http.Request, err error, want ...string) error {
	if apperr.KindOf(err) == apperr.Unsupported {
		return unsupported(r, want...)
	}
	return err
}
