package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/buildinfo"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/playground"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/sharepage"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/rest"
)

// app is the service's HTTP handler and the metrics it records, which
// serve exposes on a listener of their own when METRICS_ADDR is set.
type app struct {
	http.Handler
	metrics *metrics.Metrics
	// redis is the rate limiter's Redis connection, when REDIS_URL is
	// set, closed when serve stops.
	redis *ratelimit.Redis
}

// newRouter wires the HTTP surface: probes, the GraphQL endpoint and REST
// v1 over one resolver, each authenticating with tokens through
// auth.Middleware, uploaded files, share-link pages, the playground and the
// REST reference, and /metrics unless it has an address of its own. Every
// request gets its id, a log line, metrics and, when tracing is on, a span
// (observe.go). One rate limiter (off when RateLimit is 0) charges both
// transports.
func newRouter(c *ent.Client, tokens *auth.Tokens, cfg *config.Config, files *storage.Files, log *slog.Logger) *app {
	m := newMetrics(c, log)
	limiter, shared := newLimiter(cfg, m, log) // nil: off
	res := graph.NewResolver(c, graph.WithFiles(files), graph.WithShareBase(cfg.ViewerURL))
	r := chi.NewRouter()
	r.Use(observe(m, log)...)
	r.Use(middleware.Recoverer, cors, deadline(cfg.RequestTimeout))
	if cfg.MetricsAddr == "" {
		r.Method(http.MethodGet, "/metrics", m.Handler())
	}

	build := buildinfo.Read()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": build.Version, "revision": build.Revision})
	})
	// Ready is the database's answer. The rate limiter's Redis, when there
	// is one, is reported beside it but does not make a replica unready:
	// without it requests pass unmetered (ratelimit.Redis), and every
	// replica shares it, so failing them all would turn its outage into
	// the service's.
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		redis := make(chan string, 1)
		if shared != nil {
			go func() { redis <- redisState(ctx, shared) }()
		}
		body := map[string]string{"status": "ok", "database": "ok"}
		status := http.StatusOK
		if _, err := c.Setting.Query().Exist(privacy.DecisionContext(ctx, privacy.Allow)); err != nil {
			log.WarnContext(ctx, "readiness check failed", "err", err)
			problem.Headers(w, r, apperr.E(apperr.Unavailable, "the database is unreachable"))
			body["status"], body["database"], status = "unavailable", "unreachable", http.StatusServiceUnavailable
		}
		if shared != nil {
			body["redis"] = <-redis
		}
		writeJSON(w, status, body)
	})

	gql := endpoint.NewHandler(res, tokens, endpoint.HandlerOptions{
		PublicIntrospection: cfg.PublicIntrospection(), Limiter: limiter, Extensions: graphExtensions(),
	})
	gql = endpoint.Outage(idempotency.Middleware(endpoint.Reject)(gql))
	r.Method(http.MethodGet, "/graphql", gql)
	r.Method(http.MethodPost, "/graphql", gql)
	r.Method(http.MethodOptions, "/graphql", gql)
	r.Mount(rest.Prefix, rest.New(res, tokens, rest.Options{PublicURL: cfg.PublicURL, Limiter: limiter}))
	// The REST reference, public like the document it shows; chi routes
	// these static paths before the mount's catch-all.
	docs := playground.Docs("Configurator catalogue: REST v1", rest.Prefix+"/openapi.json")
	r.Handle(rest.Prefix+"/docs", docs)
	r.Handle(rest.Prefix+"/docs/*", docs)
	r.Handle("/files/*", http.StripPrefix("/files/", files.Handler()))
	r.Handle(config.SharePath+"*", http.StripPrefix(config.SharePath, sharepage.Handler(res.Query().SharedConfigurator)))

	pg := playground.Handler("Configurator catalogue", "/graphql")
	r.Handle("/playground", pg)
	r.Handle("/playground/*", pg)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/playground", http.StatusFound)
	})

	r.NotFound(rest.NotFound)
	r.MethodNotAllowed(rest.MethodNotAllowed(r))
	return &app{Handler: r, metrics: m, redis: shared}
}

// cors lets browser front-ends on other origins call the service. Every
// credential is a bearer token the caller sends explicitly (no cookies),
// so allowing any origin exposes nothing a page could not already send;
// preflight requests are answered here, before routing.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "Link, Location, X-Total-Count, WWW-Authenticate, Retry-After, Idempotent-Replayed, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, X-Request-Id")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
