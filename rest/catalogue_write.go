package rest

import (
	"fmt"

	"github.com/configurator/catalogue/ent"
)

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

// presentTextureCreated presents the texture POST /textures created.
func presentTextureCreated(t *ent.Texture) textureCreatedJSON {
	return textureCreatedJSON{Status: "success", ID: t.ID, Texture: presentTexture(t)}
}
