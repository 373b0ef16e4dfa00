package main

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/requestid"
	"github.com/configurator/catalogue/internal/telemetry"
)

// observe returns the middleware every request passes first, in order:
// its id (kept from X-Request-Id or made, with the metrics' note in the
// same context), its span when tracing is on, its log line, and its
// metrics. The log line and the metrics share one response writer
// wrapper.
func observe(m *metrics.Metrics, log *slog.Logger) []func(http.Handler) http.Handler {
	mw := []func(http.Handler) http.Handler{requestid.Middleware(metrics.NewContext)}
	if telemetry.Enabled() {
		mw = append(mw, telemetry.Middleware)
	}
	return append(mw, requestLog(log), m.Middleware)
}

// newMetrics makes the server's metrics, with the statistics of the
// client's connection pool.
func newMetrics(c *ent.Client, log *slog.Logger) *metrics.Metrics {
	m := metrics.New()
	if db := database.Pool(c); db != nil {
		if err := m.WatchDB(db, "catalogue"); err != nil {
			log.Warn("database pool metrics", "err", err)
		}
	}
	return m
}

// graphExtensions are the gqlgen extensions of observability: the
// operation name for the metrics, and the spans when tracing is on.
func graphExtensions() []graphql.HandlerExtension {
	exts := []graphql.HandlerExtension{metrics.GraphQL{}}
	if telemetry.Enabled() {
		exts = append(exts, telemetry.GraphQL{})
	}
	return exts
}

// requestLine is the message of the per-request log line, which serve
// writes in batches.
const requestLine = "request"

// requestLog logs one line per request with its status and duration; the
// log handler adds its request id (and trace id) from the context. The
// record goes to the handler directly: slog's Logger methods look up
// their caller's program counter for every record (runtime.Callers, a
// third of the line's cost), which no handler of serve shows.
func requestLog(log *slog.Logger) func(http.Handler) http.Handler {
	h := log.Handler()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			ctx := r.Context()
			if !h.Enabled(ctx, slog.LevelInfo) {
				return
			}
			end := time.Now()
			rec := slog.NewRecord(end, slog.LevelInfo, requestLine, 0)
			rec.AddAttrs(slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()), slog.Duration("duration", end.Sub(start)))
			h.Handle(ctx, rec)
		})
	}
}
