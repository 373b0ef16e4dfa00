// Package rest serves the legacy REST interface /api/open-api/v1 of the
// spec. Read it from the route table (routes, in this file) to a handler
// (one resource per file), which reads its input with the operation's
// reader (input.go, strict as openapi.json describes it), calls the
// resolver GraphQL calls for the same meaning, telling it what v1 shows
// (graph.V1: totals and edges), and presents the result in
// the v1 JSON shapes (present.go); so the two transports share one path to
// the data, and rest never builds a query. openapi.json is the contract:
// tests hold the route table and the readers to it, and every real answer
// to its schemas.
package rest

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/valid"
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
	// IdempotencyTTL is how long the Idempotency-Key of an order creation
	// is remembered (0: idempotency.TTL), as for GraphQL.
	IdempotencyTTL time.Duration
}

// New returns the v1 handler. It routes paths relative to Prefix, so
// callers mount it: r.Mount(rest.Prefix, rest.New(...)). Unknown paths
// answer 404 and known paths with another method 405, both as
// problem+json.
func New(res *graph.Resolver, tokens *auth.Tokens, opts Options) http.Handler {
	h := &handler{res: res.Presenting(graph.V1), tokens: tokens, base: strings.TrimRight(opts.PublicURL, "/") + Prefix, limiter: opts.Limiter,
		idempotencyTTL: opts.IdempotencyTTL}
	r := chi.NewRouter()
	h.routes(r)
	r.NotFound(NotFound)
	r.MethodNotAllowed(MethodNotAllowed(r))
	return r
}

// handler holds what the endpoints share.
type handler struct {
	// res is the graph's root stating what v1 presents (graph.V1): every
	// page's total and the edges of its shapes.
	res    *graph.Resolver
	tokens *auth.Tokens
	// base is PublicURL + Prefix, the start of every URL the interface
	// returns.
	base    string
	limiter ratelimit.Limiter
	// idempotencyTTL is Options.IdempotencyTTL.
	idempotencyTTL time.Duration
}

// routes is the route table of v1, one line per operation of openapi.json
// (TestRoutesMatchDocument holds the two together). Every operation but
// the document itself and share-link reads (whose key is their
// credential) needs a token, and refuses in its own format: problem+json
// for most, the spec's {success, message, data} envelope for option sets
// and overrides. Writes that need a scope ask auth.Allow, which decides
// it, before their input is read, so that a 403 does not depend on what
// the input names; the write itself asks again whoever calls it.
func (h *handler) routes(r chi.Router) {
	token, enveloped := h.authenticate(writeProblem), h.authenticate(writeEnvelopeError)
	catalogue, orderUpdate := allowed(auth.WriteCatalogue, writeProblem), allowed(auth.UpdateOrder, writeProblem)

	r.Get("/openapi.json", serveOpenAPI)
	r.Get("/shared/{key}", h.getShared)

	r.With(token).Get("/orders", serve(h.listOrders))
	r.With(token, idempotency.Middleware(writeProblem, h.idempotencyTTL)).Post("/orders", created(h, "/orders", readOrder, h.res.Mutation().CreateOrder, func(o *ent.Order) int { return o.ID }, presentOrder))
	r.With(token).Get("/orders/{id}", byID(h.res.Query().Order, presentOrder))
	r.With(token, orderUpdate).Patch("/orders/{id}", updated(readOrderUpdate, h.res.Mutation().UpdateOrder, presentOrder))

	r.With(token).Get("/materials", paged(h, "/materials", materialsArgs, h.res.Query().MaterialsPage, materialPage))
	r.With(token, catalogue).Post("/materials", created(h, "/materials", readMaterialCreate, h.res.Mutation().CreateMaterial, func(m *ent.Material) int { return m.ID }, presentMaterial))
	r.With(token).Get("/materials/{id}", byID(h.res.Query().Material, presentMaterial))
	r.With(token, catalogue).Put("/materials/{id}", updated(readMaterialUpdate, h.res.Mutation().UpdateMaterial, presentMaterial))
	r.With(token, catalogue).Delete("/materials/{id}", byID(h.res.Mutation().DeleteMaterial, deleted("material")))
	r.With(token).Get("/materials-categories/list", serve(h.listMaterialCategories))

	r.With(token).Get("/textures", paged(h, "/textures", texturesArgs, h.res.Query().TexturesPage, texturePage))
	r.With(token, catalogue).Post("/textures", created(h, "/textures", readTextureCreate, h.res.Mutation().CreateTexture, func(t *ent.Texture) int { return t.ID }, presentTextureCreated))
	r.With(token).Get("/textures/{id}", byID(h.res.Query().Texture, presentTexture))
	r.With(token, catalogue).Put("/textures/{id}", updated(readTextureUpdate, h.res.Mutation().UpdateTexture, presentTexture))
	r.With(token, catalogue).Delete("/textures/{id}", byID(h.res.Mutation().DeleteTexture, deleted("texture")))

	r.With(token).Get("/configurator-forms", serve(h.listForms))
	r.With(token).Get("/configurator-forms/{id}", byID(h.res.Query().ConfiguratorForm, presentForm))
	r.With(token).Get("/configurator-form-fields", paged(h, "/configurator-form-fields", pageArgs[ent.FormFieldWhereInput](formFieldSorts, nil), h.res.Query().FormFieldsPage, formFieldPage))
	r.With(token).Get("/configurator-form-fields/{id}", byID(h.res.Query().FormField, presentFormField))

	r.With(token).Get("/configurator-options/types/list", serve(h.listOptionTypes))
	r.With(token).Get("/configurator-options", paged(h, "/configurator-options", pageArgs[ent.ConfiguratorOptionWhereInput](optionSorts, nil), h.res.Query().ConfiguratorOptionsPage, optionPage))
	r.With(token).Get("/configurator-option/{id}", byID(h.res.Query().ConfiguratorOption, presentOption))
	r.With(token).Get("/configurator-option-variations", serve(h.listVariations))
	r.With(enveloped).Get("/configurator-option-sets", h.listOptionSets)
	r.With(enveloped, allowed(auth.Overrides, writeEnvelopeError)).Post("/configurator-options/set/new-options", h.setOptions)
}

// allowed refuses a request whose token may not run op (auth.Allow's
// answer, written by fail) before its parameters and body are read.
func allowed(op auth.Op, fail auth.Reject) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := auth.Allow(r.Context(), op); err != nil {
				fail(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// serve is the handler of a request that answers 200: do returns the
// presented answer, or the error answered as problem+json (its value is
// then not read).
func serve(do func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := do(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, v)
	}
}

// byID is the handler of .../{id}: the resolver of the same meaning loads
// (or deletes) the record, NotFound for an unknown id or another owner's,
// and present shapes the answer.
func byID[T, J any](load func(context.Context, int) (T, error), present func(T) J) http.HandlerFunc {
	return serve(func(r *http.Request) (any, error) {
		id, err := pathID(r)
		if err != nil {
			return nil, err
		}
		v, err := load(r.Context(), id)
		if err != nil {
			return nil, err
		}
		return present(v), nil
	})
}

// created is the handler of a POST that creates a record under path:
// read takes the body (done frees what it holds, a form's uploads and
// temporary files), create is the resolver of the same meaning, and the
// answer is 201 with present's shape and the record's Location (id gives
// its id).
func created[I, T, J any](h *handler, path string, read func(http.ResponseWriter, *http.Request) (I, func(), error), create func(context.Context, I) (T, error), id func(T) int, present func(T) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, done, err := read(w, r)
		defer done()
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		v, err := create(r.Context(), in)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		w.Header().Set("Location", h.base+path+"/"+strconv.Itoa(id(v)))
		writeJSON(w, r, http.StatusCreated, present(v))
	}
}

// updated is the handler of a PUT or PATCH of .../{id}: read takes the
// body and the fields it sets to null, which the resolver of the same
// meaning (update) reads (valid.WithNulls) to clear what can be cleared
// and refuse the rest; 200 with present's shape.
func updated[I, T, J any](read func(http.ResponseWriter, *http.Request) (I, []string, func(), error), update func(context.Context, int, I) (T, error), present func(T) J) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathID(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		in, nulls, done, err := read(w, r)
		defer done()
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		v, err := update(valid.WithNulls(r.Context(), nulls), id, in)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, present(v))
	}
}

// paged is the handler of a bare-array page list at path: read takes its
// parameters, load is the page resolver of the same meaning, and present
// shapes the page's items and gives its pagination (headers and links).
func paged[A, P any](h *handler, path string, read func(*http.Request) (A, error), load func(context.Context, A) (P, error), present func(P) (any, *model.Pagination)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		args, err := read(r)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		res, err := load(r.Context(), args)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		items, pg := present(res)
		writePage(w, r, items, pg, h.linksOf(r, path, pg))
	}
}

// authenticate resolves the bearer token, refuses a request without a
// viewer and charges the request to the token's budget (charge); fail
// writes a refusal in the endpoint's format.
func (h *handler) authenticate(fail auth.Reject) func(http.Handler) http.Handler {
	resolve := auth.Middleware(h.tokens, fail)
	return func(next http.Handler) http.Handler {
		return resolve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Accept and Content-Type within their bounds before any
			// reader of the operation parses them.
			if err := valid.MediaHeaders(r.Header); err != nil {
				fail(w, r, err)
				return
			}
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
		problem.WriteStatus(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"method "+r.Method+" is not allowed on "+r.URL.Path+"; allowed: "+strings.Join(allowed, ", "))
	}
}
