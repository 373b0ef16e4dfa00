package endpoint

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/problem"
)

type outageKey struct{}

// Outage answers a GraphQL request with HTTP 503 and Retry-After when one
// of its errors is UNAVAILABLE (the database is down or restarting, or the
// request ran out of time), instead of GraphQL's usual 200: a client, a
// proxy or a load balancer then knows that the request failed as a whole
// and may be retried, as REST's 503 says. The body is the GraphQL
// response, whatever data it holds included.
func Outage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := new(atomic.Bool)
		ow := &outageWriter{ResponseWriter: w, seen: seen}
		next.ServeHTTP(ow, r.WithContext(context.WithValue(r.Context(), outageKey{}, seen)))
	})
}

// noteOutage marks the request of ctx as failed by an outage; the error
// presenter calls it before the response is written.
func noteOutage(ctx context.Context) {
	if seen, ok := ctx.Value(outageKey{}).(*atomic.Bool); ok {
		seen.Store(true)
	}
}

// outageWriter turns the 200 of a GraphQL response into 503 when the
// request met an outage.
type outageWriter struct {
	http.ResponseWriter
	seen    *atomic.Bool
	written bool
}

func (w *outageWriter) WriteHeader(status int) {
	if !w.written && status == http.StatusOK && w.seen.Load() {
		problem.Headers(w.ResponseWriter, nil, apperr.E(apperr.Unavailable, "unavailable"))
		status = http.StatusServiceUnavailable
	}
	w.written = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *outageWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController, and the WebSocket library's
// Hijack, reach the underlying writer.
func (w *outageWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends what is buffered, for streamed answers (subscriptions over
// Server-Sent Events), which look for http.Flusher on the writer itself.
func (w *outageWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }
