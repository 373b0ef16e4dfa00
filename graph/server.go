package graph

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/generated"
)

// MaxComplexity bounds the number of fields one operation may resolve, so
// that a single deeply nested query cannot exhaust the database.
const MaxComplexity = 2000

// NewHandler returns the GraphQL HTTP handler (GET for queries, POST) over
// client. Authentication happens before it, in the auth middleware.
func NewHandler(client *ent.Client) http.Handler {
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: NewResolver(client)}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.AddTransport(transport.MultipartForm{MaxUploadSize: 32 << 20, MaxMemory: 8 << 20})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(recoverPanic)
	return srv
}
