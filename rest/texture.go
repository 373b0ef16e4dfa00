package rest

import "github.com/configurator/catalogue/graph/model"

// texturePage shapes GET /textures: a bare array, paged.
func texturePage(p *model.TexturePage) (any, *model.Pagination) {
	return presentAll(p.Data, presentTexture), p.Pagination
}
