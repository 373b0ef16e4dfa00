package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/apperr"
)

// MaxComplexity bounds the number of fields one operation may resolve, so
// that a single deeply nested query cannot exhaust the database.
const MaxComplexity = 2000

// Request body limits: an operation in JSON is small; multipart requests
// carry uploads (graphql multipart request spec).
const (
	MaxJSONBody      = 1 << 20
	MaxMultipartBody = 32 << 20
)

// NewHandler returns the GraphQL HTTP handler (GET for queries, POST) over
// client, with the resolver options opts. Authentication happens before
// it, in the auth middleware.
func NewHandler(client *ent.Client, opts ...Option) http.Handler {
	res := NewResolver(client, opts...)
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: res}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: MaxMultipartBody, MaxMemory: 8 << 20})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	for _, ext := range res.extensions {
		srv.Use(ext)
	}
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(recoverPanic)
	return limitBody(srv)
}

// limitBody answers 413 to a body larger than its content type allows,
// without reading it when Content-Length says so, so that a client cannot
// make the server hold an unbounded body in memory. A JSON body without a
// length is read up to the limit here (gqlgen would answer a cut-off body
// with 200); a multipart body is cut off while it streams.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(MaxJSONBody)
		multipart := strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/")
		if multipart {
			limit = MaxMultipartBody
		}
		if r.ContentLength > limit {
			tooLarge(w, r, limit)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if !multipart && r.Body != http.NoBody {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				tooLarge(w, r, limit)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
		"message":    fmt.Sprintf("request body is larger than %d bytes", limit),
		"extensions": errorExtensions(r.Context(), apperr.Invalid),
	}}})
}
