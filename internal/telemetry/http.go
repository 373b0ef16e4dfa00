package telemetry

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Middleware traces each request with a server span (otelhttp: method,
// path, status, peer, and the W3C traceparent of the caller as its
// parent). Inside chi's router (Use) it renames the span after routing to
// "METHOD route-template" and sets http.route, so ids in paths do not
// make every span name unique. Install it only when Enabled.
func Middleware(next http.Handler) http.Handler {
	named := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if p := chi.RouteContext(r.Context()).RoutePattern(); p != "" {
			span := trace.SpanFromContext(r.Context())
			span.SetName(spanName("", r))
			span.SetAttributes(semconv.HTTPRoute(p))
		}
	})
	// otelhttp names the span when it starts (no route yet) and again
	// when the request has a net/http pattern, which chi sets: both times
	// through spanName.
	return otelhttp.NewHandler(named, "http", otelhttp.WithSpanNameFormatter(spanName))
}

// spanName is "METHOD route-template" once chi has routed r, the method
// alone before.
func spanName(_ string, r *http.Request) string {
	if p := chi.RouteContext(r.Context()).RoutePattern(); p != "" {
		return r.Method + " " + p
	}
	return r.Method
}
