// Package endpoint serves the graph over HTTP: GraphQL over HTTP (GET,
// POST with JSON, multipart uploads, Server-Sent Events, negotiated once
// by the exchange) and WebSocket, with the statuses of the GraphQL over
// HTTP specification, the limits every operation is held to before it
// runs (document size, depth, complexity, the token's rate budget), the
// anonymous rule, the error presenter and the outage answers. The graph
// package itself knows nothing of HTTP; cmd/server mounts NewHandler.
package endpoint

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/fast"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/valid"
)

// HandlerOptions configures the GraphQL endpoint.
type HandlerOptions struct {
	// PublicIntrospection lets a request without a token introspect the
	// schema (GRAPHQL_INTROSPECTION=public); by default introspection
	// needs a valid token like any other read.
	PublicIntrospection bool
	// Limiter, when set, charges every request of a token to its budget
	// (meter, limits); REST shares it through its own options.
	Limiter ratelimit.Limiter
	// Extensions are added to the GraphQL handler ahead of its own
	// (metrics, tracing), so that they see every operation, including
	// those the handler's limits refuse.
	Extensions []graphql.HandlerExtension
	// APQ keeps the documents clients register with automatic persisted
	// queries: a persisted.Redis shared by the replicas when REDIS_URL is
	// set; nil is a persisted.Memory of persisted.DefaultMemoryBytes, this
	// handler's own.
	APQ graphql.Cache[string]
	// Trusted are the documents of the PERSISTED_DOCUMENTS manifest,
	// served by their hash without their text; nil is none.
	Trusted *persisted.Manifest
	// TrustedOnly refuses every other document, unless the token is a
	// dashboard token (PERSISTED_ONLY); see persistedDocuments.
	TrustedOnly bool
	// Streams caps the open subscriptions (zero values: the defaults).
	Streams StreamLimits
}

// NewHandler returns the GraphQL endpoint (GET for queries, POST with a
// JSON or multipart body) over res, the resolver REST v1 calls too.
// Requests authenticate as on REST, through auth.Middleware over tokens
// (nil: every request is anonymous); a request without a token may only
// read share links (sharedConfigurator) and, with PublicIntrospection,
// introspect (anonymousRule). Every operation is bounded and charged to
// its token (limits) before it executes.
func NewHandler(res *graph.Resolver, tokens *auth.Tokens, opts HandlerOptions) http.Handler {
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: res}))
	srv.AddTransport(transport.Options{})
	streams := newStreams(tokens, opts.Streams)
	srv.AddTransport(websocketTransport{streams})
	srv.AddTransport(exchange{multipart: transport.MultipartForm{MaxUploadSize: valid.MaxMultipartBody, MaxMemory: 8 << 20}})
	parsed := lru.New[*ast.QueryDocument](1000)
	srv.SetQueryCache(undeferred{parsed})
	srv.SetValidationRulesFn(validationRules)
	for _, ext := range opts.Extensions {
		srv.Use(ext)
	}
	srv.Use(extension.Introspection{})
	apq := cmp.Or(opts.APQ, graphql.Cache[string](persisted.NewMemory(persisted.DefaultMemoryBytes)))
	srv.Use(persistedDocuments{cache: apq, trusted: opts.Trusted, only: opts.TrustedOnly})
	srv.Use(&anonymousRule{publicIntrospection: opts.PublicIntrospection})
	// The limits after the persisted documents, which fill in the query.
	// gqlgen runs every extension's operation hooks while it creates the
	// operation, before any interceptor (the fast path below) or
	// resolver, so they hold whatever is registered after them
	// (TestLimitsBeforeInterceptors).
	srv.Use(&limits{parsed: parsed, lim: opts.Limiter})
	srv.Use(cursors{})
	srv.Use(streams)
	srv.Use(fast.New(res))
	// _entities and _service (graph/federation.go), inside the fast path
	// (the first extension registered is the outermost), which writes
	// the entities it answers.
	srv.Use(graph.NewFederation(res))
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(recoverPanic)
	h := meter(opts.Limiter, limitBody(srv))
	if tokens != nil {
		h = auth.Middleware(tokens, Reject)(h)
	}
	return noStore(h)
}

// limitBody answers 413 to a body larger than its content type allows,
// without reading it when Content-Length says so, so that a client cannot
// make the server hold an unbounded body in memory. A JSON body without a
// length is cut off at the limit while the transport reads it; a
// multipart body while it streams.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(valid.MaxJSONBody)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			limit = valid.MaxMultipartBody
		}
		if r.ContentLength > limit {
			writeErrors(w, r, valid.TooLarge(limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// noStore marks every answer of the endpoint Cache-Control: no-store, as
// REST's are: answers depend on the token and change with every write.
// The one exception replaces it: a query over GET answered without errors
// carries an ETag and private, no-cache (writeResponse).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
