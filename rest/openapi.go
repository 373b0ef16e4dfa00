package rest

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

// openAPIDocument is the OpenAPI 3.1 description of exactly what this
// package serves: contract_test.go holds the route table and the input
// readers to it, and openapi_test.go checks that real responses of every
// operation validate against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIETag is the strong validator of the document, fixed at build time.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}()

// serveOpenAPI is GET /openapi.json: the document, without a token,
// cacheable for five minutes and revalidated by its ETag (conditional
// and range requests are http.ServeContent's).
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", openAPIETag)
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(openAPIDocument))
}
