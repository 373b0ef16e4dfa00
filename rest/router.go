// Package rest serves the legacy REST interface /api/open-api/v1 of the
// spec. Its handlers parse a request strictly, call the same resolver
// methods GraphQL uses and present the result in the v1 JSON shapes, so the
// two transports share one path to the data; rest never builds a query.
package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/idempotency"
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
}

// New returns the v1 handler. It routes paths relative to Prefix, so
// callers mount it: r.Mount(rest.Prefix, rest.New(...)). Every endpoint
// needs a token (401 otherwise) except the OpenAPI document and share-link
// reads, whose key is their credential; unknown paths answer 404 and known
// paths with another method 405, both as problem+json.
func New(res *graph.Resolver, tokens *auth.Tokens, opts Options) http.Handler {
	h := &handler{res: res, tokens: tokens, base: strings.TrimRight(opts.PublicURL, "/") + Prefix}
	r := chi.NewRouter()
	routes(r, h)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, apperr.E(apperr.NotFound, "no such path: %s", r.URL.Path))
	})
	r.MethodNotAllowed(methodNotAllowed(r))
	return r
}

// handler holds what the endpoints share.
type handler struct {
	res    *graph.Resolver
	tokens *auth.Tokens
	// base is PublicURL + Prefix, the start of every URL the interface
	// returns.
	base string
}

// routes registers every endpoint. Each group authenticates with the
// failure format of its endpoints: problem+json for most, the spec's
// {success, message, data} envelope for option sets and overrides.
func routes(r chi.Router, h *handler) {
	r.Group(func(r chi.Router) {
		r.Use(h.authenticate(writeProblem))

		// Read side.
		r.Get("/orders", h.listOrders)
		r.Get("/orders/{id}", byID(h.res.Query().Order, presentOrder))
		r.Get("/materials", h.listMaterials)
		r.Get("/materials/{id}", byID(h.res.Query().Material, presentMaterial))
		r.Get("/materials-categories/list", h.listMaterialCategories)
		r.Get("/textures", h.listTextures)
		r.Get("/textures/{id}", byID(h.res.Query().Texture, presentTexture))
		r.Get("/configurator-forms", h.listForms)
		r.Get("/configurator-forms/{id}", byID(h.res.Query().ConfiguratorForm, presentForm))
		r.Get("/configurator-form-fields", h.listFormFields)
		r.Get("/configurator-form-fields/{id}", byID(h.res.Query().FormField, presentFormField))
		r.Get("/configurator-options/types/list", h.listOptionTypes)
		r.Get("/configurator-options", h.listOptions)
		r.Get("/configurator-option/{id}", byID(h.res.Query().ConfiguratorOption, presentOption))
		r.Get("/configurator-option-variations", h.listVariations)

		// Write side. Materials and textures need a dashboard token (403
		// otherwise, from the privacy rules).
		r.With(idempotency.Middleware(writeProblem)).Post("/orders", h.createOrder)
		r.Post("/materials", h.createMaterial)
		r.Put("/materials/{id}", h.updateMaterial)
		r.Delete("/materials/{id}", byID(h.res.Mutation().DeleteMaterial, deleted("material")))
		r.Post("/textures", h.createTexture)
		r.Put("/textures/{id}", h.updateTexture)
		r.Delete("/textures/{id}", byID(h.res.Mutation().DeleteTexture, deleted("texture")))
	})

	// Share links: the key is the credential, no token is needed.
	r.Get("/shared/{key}", h.getShared)
	r.Get("/openapi.json", serveOpenAPI) // the interface description, public

	r.Group(func(r chi.Router) {
		r.Use(h.authenticate(writeEnvelopeError))

		// Read side.
		r.Get("/configurator-option-sets", h.listOptionSets)

		// Write side.
		r.Post("/configurator-options/set/new-options", h.setOptions)
	})
}

// byID serves .../{id}: the resolver of the same meaning loads (or
// deletes) the record, NotFound for an unknown id or another owner's, and
// present shapes the answer.
func byID[T, J any](load func(context.Context, int) (T, error), present func(T) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r)
		if err == nil {
			var v T
			if v, err = load(r.Context(), id); err == nil {
				writeJSON(w, http.StatusOK, present(v))
				return
			}
		}
		writeProblem(w, r, err)
	}
}

// authenticate resolves the bearer token and refuses a request without a
// viewer; fail writes the refusal in the endpoint's format.
func (h *handler) authenticate(fail auth.Reject) func(http.Handler) http.Handler {
	resolve := auth.Middleware(h.tokens, fail)
	return func(next http.Handler) http.Handler {
		return resolve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if viewer.FromContext(r.Context()) == nil {
				fail(w, r, apperr.ErrNoToken)
				return
			}
			next.ServeHTTP(w, r)
		}))
	}
}

// methodNotAllowed answers 405 with the methods the path does allow; chi
// computes them only for its own default handler, so they are found again
// by matching the path against the routes.
func methodNotAllowed(routes chi.Routes) http.HandlerFunc {
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
			writeProblem(w, r, apperr.E(apperr.NotFound, "no such path: %s", r.URL.Path))
			return
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeStatusProblem(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"method "+r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allowed, ", "))
	}
}
