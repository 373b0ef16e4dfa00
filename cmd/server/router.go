package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/edge"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/playground"
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
	// apq is the persisted queries' Redis connection, when REDIS_URL is
	// set, closed when serve stops.
	apq *persisted.Redis
	// events carry writes to webhooks and subscriptions; serve starts
	// them.
	events *eventParts
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
	ev := newEvents(c, cfg, m, log)
	res := graph.NewResolver(c, append(ev.options(), graph.WithFiles(files), graph.WithShareBase(cfg.ViewerURL))...)
	r := chi.NewRouter()
	r.Use(observe(m, log)...)
	r.Use(middleware.Recoverer, edge.CORS, edge.Deadline(cfg.RequestTimeout), edge.Admit(cfg.ActiveRequests))
	if cfg.MetricsAddr == "" {
		r.Method(http.MethodGet, "/metrics", m.Handler())
	}

	r.Get("/healthz", edge.Healthz())
	var redis func(context.Context) string
	if shared != nil {
		redis = func(ctx context.Context) string { return redisState(ctx, shared) }
	}
	r.Get("/readyz", edge.Readyz(func(ctx context.Context) error {
		_, err := c.Setting.Query().Exist(privacy.DecisionContext(ctx, privacy.Allow))
		return err
	}, redis, log))

	gqlOpts := endpoint.HandlerOptions{
		PublicIntrospection: cfg.PublicIntrospection(), Limiter: limiter, Extensions: graphExtensions(),
		Streams: endpoint.StreamLimits{PerConnection: cfg.SubscriptionsPerConnection, PerCaller: cfg.StreamsPerToken},
		Trusted: cfg.Trusted, TrustedOnly: cfg.PersistedOnly,
	}
	apq := newAPQ(cfg, m, log)
	if apq != nil {
		gqlOpts.APQ = apq
	}
	gql := endpoint.NewHandler(res, tokens, gqlOpts)
	gql = endpoint.Outage(idempotency.Middleware(endpoint.Reject, cfg.IdempotencyTTL)(gql))
	r.Method(http.MethodGet, "/graphql", gql)
	r.Method(http.MethodPost, "/graphql", gql)
	r.Method(http.MethodOptions, "/graphql", gql)
	r.Mount(rest.Prefix, rest.New(res, tokens, rest.Options{PublicURL: cfg.PublicURL, Limiter: limiter, IdempotencyTTL: cfg.IdempotencyTTL}))
	// The REST reference, public like the document it shows; chi routes
	// these static paths before the mount's catch-all.
	docs := playground.Docs("Configurator catalogue: REST v1", rest.Prefix+"/openapi.json")
	r.Handle(rest.Prefix+"/docs", docs)
	r.Handle(rest.Prefix+"/docs/*", docs)
	r.Handle("/files/*", http.StripPrefix("/files/", files.Handler()))
	r.Handle(config.SharePath+"*", http.StripPrefix(config.SharePath, sharepage.Handler(res.Query().SharedConfigurator, c, files)))

	pg := playground.Handler("Configurator catalogue", "/graphql", playground.DemoToken(cfg.DemoToken))
	r.Handle("/playground", pg)
	r.Handle("/playground/*", pg)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/playground", http.StatusFound)
	})

	r.NotFound(rest.NotFound)
	r.MethodNotAllowed(rest.MethodNotAllowed(r))
	return &app{Handler: r, metrics: m, redis: shared, apq: apq, events: ev}
}
