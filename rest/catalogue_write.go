package rest

import (
	"fmt"
	"net/http"

	"github.com/configurator/catalogue/internal/valid"
)

// createMaterial is POST /materials [Dashboard API]: a JSON object of the
// material's writable fields; 201 with the material.
func (h *handler) createMaterial(w http.ResponseWriter, r *http.Request) {
	b, _, err := readMaterial(w, r, true)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	m, err := h.res.Mutation().CreateMaterial(r.Context(), b.createInput())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/materials/%d", h.base, m.ID))
	writeJSON(w, r, http.StatusCreated, presentMaterial(m))
}

// updateMaterial is PUT /materials/{id} [Dashboard API]: the fields the
// body names change, the others stay; null clears material_file,
// category_id and texture_id (the resolver's null rule). 200 with the
// material.
func (h *handler) updateMaterial(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	b, nulls, err := readMaterial(w, r, false)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	m, err := h.res.Mutation().UpdateMaterial(valid.WithNulls(r.Context(), nulls), id, b.updateInput())
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentMaterial(m))
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
	in, done, err := readTextureCreate(w, r)
	defer done()
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	t, err := h.res.Mutation().CreateTexture(r.Context(), in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/textures/%d", h.base, t.ID))
	writeJSON(w, r, http.StatusCreated, textureCreatedJSON{Status: "success", ID: t.ID, Texture: presentTexture(t)})
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
	in, nulls, done, err := readTextureUpdate(w, r)
	defer done()
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	t, err := h.res.Mutation().UpdateTexture(valid.WithNulls(r.Context(), nulls), id, in)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, presentTexture(t))
}
