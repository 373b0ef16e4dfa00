package rest

import (
	"net/http"
)

// listTextures is GET /textures: a bare array, paged.
func (h *handler) listTextures(w http.ResponseWriter, r *http.Request) {
	args, err := texturesArgs(r)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	res, err := h.res.Query().TexturesPage(r.Context(), args)
	if err != nil {
		writeProblem(w, r, err)
		return
	}
	writePage(w, r, presentAll(res.Data, presentTexture), res.Pagination, h.linksOf(r, "/textures", res.Pagination))
}
