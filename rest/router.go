// Package rest serves the legacy REST interface /api/open-api/v1 of the
// spec. Requests are read strictly as its OpenAPI document describes them
// (contract.go, bind.go) into the arguments of the GraphQL field of the
// same meaning; the handlers call the same resolver methods GraphQL uses
// and present the result in the v1 JSON shapes, so the two transports
// share one path to the data; rest never builds a query.
package rest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/viewer"
)

// Prefix is the path the v1 interface is mounted at.
const Prefix = "/api/open-api/v1"

// Options configures the v1 handler.
type Options struct {
	// PublicURL is the absolute base of the URLs the interface returns
	// (pagination links), such as http://localhost:8080, without a final
	// slash.
	PublicURL string
	// Limiter, when set, charges every request of a token to its budget
	// (see charge); GraphQL shares it.
	Limiter ratelimit.Limiter
}

// New returns the v1 handler. It routes paths relative to Prefix, so
// callers mount it: r.Mount(rest.Prefix, rest.New(...)). Its routes, the
// operations that need a token (401 otherwise: all but the OpenAPI
// document and share-link reads, whose key is their credential) and what
// each request may carry are read from the OpenAPI document
// (contract.go); unknown paths answer 404 and known paths with another
// method 405, both as problem+json. It panics when the document and the
// handlers or the GraphQL schema disagree, which the tests would show.
func New(res *graph.Resolver, tokens *auth.Tokens, opts Options) http.Handler {
	h := &handler{res: res, tokens: tokens, base: strings.TrimRight(opts.PublicURL, "/") + Prefix, limiter: opts.Limiter}
	r := chi.NewRouter()
	if err := h.routes(r, openAPIDocument); err != nil {
		panic("rest: " + err.Error())
	}
	r.NotFound(NotFound)
	r.MethodNotAllowed(MethodNotAllowed(r))
	return r
}

// handler holds what the endpoints share.
type handler struct {
	res    *graph.Resolver
	tokens *auth.Tokens
	// base is PublicURL + Prefix, the start of every URL the interface
	// returns.
	base    string
	limiter ratelimit.Limiter
}

// handlers are the handlers of the document's operations, by
// operationId.
func (h *handler) handlers() map[string]handlerOf {
	return map[string]handlerOf{
		// Read side.
		"listOrders":              bound(h.listOrders),
		"getOrder":                byID(h.res.Query().Order, presentOrder),
		"listMaterials":           bound(h.listMaterials),
		"getMaterial":             byID(h.res.Query().Material, presentMaterial),
		"listMaterialCategories":  bound(h.listMaterialCategories),
		"listTextures":            bound(h.listTextures),
		"getTexture":              byID(h.res.Query().Texture, presentTexture),
		"listConfiguratorForms":   bound(h.listForms),
		"getConfiguratorForm":     byID(h.res.Query().ConfiguratorForm, presentForm),
		"listFormFields":          bound(h.listFormFields),
		"getFormField":            byID(h.res.Query().FormField, presentFormField),
		"listOptionTypes":         bound(h.listOptionTypes),
		"listConfiguratorOptions": bound(h.listOptions),
		"getConfiguratorOption":   byID(h.res.Query().ConfiguratorOption, presentOption),
		"listOptionVariations":    bound(h.listVariations),
		"listOptionSets":          bound(h.listOptionSets),
		"getSharedConfigurator":   bound(h.getShared),
		"getOpenAPIDocument":      bound(serveOpenAPI),

		// Write side. Materials and textures need a dashboard token and
		// overrides the Open API token of a configurator: 403 before the
		// input is read, whatever it names (scoped).
		"createOrder":        bound(h.createOrder),
		"createMaterial":     scoped(auth.RequireDashboard, bound(h.createMaterial)),
		"updateMaterial":     scoped(auth.RequireDashboard, bound(h.updateMaterial)),
		"deleteMaterial":     scoped(auth.RequireDashboard, byID(h.res.Mutation().DeleteMaterial, deleted("material"))),
		"createTexture":      scoped(auth.RequireDashboard, bound(h.createTexture)),
		"updateTexture":      scoped(auth.RequireDashboard, bound(h.updateTexture)),
		"deleteTexture":      scoped(auth.RequireDashboard, byID(h.res.Mutation().DeleteTexture, deleted("texture"))),
		"setOptionOverrides": scoped(share.Scope, bound(h.setOptions)),
	}
}

// scoped refuses a request whose token may not make the write (check's
// error, in the operation's failure format) before its parameters and
// body are read, so that the answer does not depend on what they name;
// the resolvers and the privacy rules check the scope again.
func scoped(check func(context.Context) error, build handlerOf) handlerOf {
	return func(op *operation, schema *ast.Schema) (http.HandlerFunc, error) {
		serve, err := build(op, schema)
		if err != nil {
			return nil, err
		}
		return func(w http.ResponseWriter, r *http.Request) {
			if err := check(r.Context()); err != nil {
				op.fail(w, r, err)
				return
			}
			serve(w, r)
		}, nil
	}
}

// headerReaders are the middlewares that read the request headers an
// operation documents as parameters, by header name; each refuses a
// malformed header through the operation's failure writer.
var headerReaders = map[string]func(reject func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler{
	idempotency.Header: idempotency.Middleware,
}

// routes serves every operation of document with its handler, behind
// authentication unless the operation needs no token. Authentication
// refuses in the operation's failure format: problem+json for most, the
// spec's {success, message, data} envelope for option sets and
// overrides.
func (h *handler) routes(r chi.Router, document []byte) error {
	doc, err := readDocument(document)
	if err != nil {
		return fmt.Errorf("openapi.json: %w", err)
	}
	ops, err := doc.operations()
	if err != nil {
		return fmt.Errorf("openapi.json: %w", err)
	}
	handlers, schema := h.handlers(), generated.NewExecutableSchema(generated.Config{}).Schema()
	for _, op := range ops {
		build, ok := handlers[op.id]
		if !ok {
			return fmt.Errorf("openapi.json: %s %s: no handler for operation %q", op.method, op.path, op.id)
		}
		delete(handlers, op.id)
		fn, err := build(op, schema)
		if err != nil {
			return fmt.Errorf("openapi.json: %s %s (%s): %w", op.method, op.path, op.id, err)
		}
		var serve http.Handler = fn
		for _, name := range slices.Backward(op.headers) {
			read, ok := headerReaders[name]
			if !ok {
				return fmt.Errorf("openapi.json: %s %s: no reader of the header %s", op.method, op.path, name)
			}
			serve = read(op.fail)(serve)
		}
		if !op.public {
			serve = h.authenticate(op.fail)(serve)
		}
		r.Method(op.method, op.path, serve)
	}
	for id := range handlers {
		return fmt.Errorf("openapi.json has no operation %q", id)
	}
	return nil
}

// authenticate resolves the bearer token, refuses a request without a
// viewer and charges the request to the token's budget (charge); fail
// writes a refusal in the endpoint's format.
func (h *handler) authenticate(fail auth.Reject) func(http.Handler) http.Handler {
	resolve := auth.Middleware(h.tokens, fail)
	return func(next http.Handler) http.Handler {
		return resolve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v := viewer.FromContext(r.Context())
			if v == nil {
				fail(w, r, apperr.ErrNoToken)
				return
			}
			if err := h.charge(w, r, v); err != nil {
				fail(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		}))
	}
}

// NotFound answers a path no route claims: 404 as problem+json. The
// server's root router answers with it too, so every unknown path gets
// the same answer.
func NotFound(w http.ResponseWriter, r *http.Request) {
	writeProblem(w, r, apperr.E(apperr.NotFound, "no such path: %s", r.URL.Path))
}

// MethodNotAllowed answers 405 with the methods the path does allow; chi
// computes them only for its own default handler, so they are found again
// by matching the path against routes.
func MethodNotAllowed(routes chi.Routes) http.HandlerFunc {
	methods := []string{
		http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions,
	}
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePath != "" {
			path = rctx.RoutePath
		}
		var allowed []string
		for _, m := range methods {
			if routes.Match(chi.NewRouteContext(), m, path) {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			NotFound(w, r)
			return
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeStatusProblem(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"method "+r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allowed, ", "))
	}
}
