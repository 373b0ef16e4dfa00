package rest

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
)

// openAPIDocument is the OpenAPI 3.1 description of exactly what this
// package serves. openapi_test.go keeps it true: every route is in it and
// nothing else, and real responses of every operation validate against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIETag is the strong validator of the document, fixed at build time.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}()

// OpenAPI returns a copy of the OpenAPI document of the v1 interface, served
// at Prefix + "/openapi.json".
func OpenAPI() []byte { return slices.Clone(openAPIDocument) }

// serveOpenAPI is GET /openapi.json: the document, without a token,
// cacheable for five minutes and revalidated by its ETag.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", openAPIETag)
	if etagMatches(r.Header.Get("If-None-Match"), openAPIETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(openAPIDocument)
}

// etagMatches reports whether an If-None-Match header names etag (or is
// *), comparing weakly as RFC 9110 asks for If-None-Match.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
