// Package edge is what every request passes at the edge of the service,
// before either transport: cross-origin access for browser front-ends, the
// request's deadline, and the health and readiness probes a load balancer
// or orchestrator asks. cmd/server mounts them; they know nothing of the
// data beyond the checks they are handed.
package edge

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/configurator/catalogue/internal/admit"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/buildinfo"
	"github.com/configurator/catalogue/internal/problem"
)

// CORS lets browser front-ends on other origins call the service. Every
// credential is a bearer token the caller sends explicitly (no cookies),
// so allowing any origin exposes nothing a page could not already send;
// preflight requests are answered here, before routing.
func CORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "ETag, Link, Location, X-Total-Count, WWW-Authenticate, Retry-After, Idempotent-Replayed, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Deadline gives every request a deadline d after it starts (d <= 0:
// none). Database work stops when it passes (PostgreSQL statements are
// cancelled, waits for a connection end), and the transports answer 503
// with a Retry-After, so that a request never hangs on a sick database
// longer than d. The whole request, body included, must have arrived by
// then: the server's read timeout is d (cmd/server), and nothing lifts
// it before the body is read. The server's write timeout, a little
// longer, cuts off a handler that would ignore it. Only a subscription outlives
// it, once its endpoint knows it serves one (Lift); no header alone
// lifts it, or a REST write saying Accept: text/event-stream would read
// its body for as long as its client liked.
func Deadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			ctx = context.WithValue(ctx, liftKey{}, &lift{base: r.Context(), rc: rc})
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// liftKey holds what Lift needs of a request Deadline bounded.
type liftKey struct{}

type lift struct {
	// base is the request's context before the deadline: it ends when
	// the client leaves or the server stops.
	base context.Context
	rc   *http.ResponseController
}

// Lift frees the request of ctx from the deadline and from the queue of
// work (Admit), once its endpoint knows that it serves a subscription (a
// GraphQL WebSocket, an SSE request carrying a subscription operation),
// which lives as long as its client. It returns a context with ctx's
// values that ends only when the client leaves or the server stops, and
// lifts the connection's read and write deadlines; the request's body
// must have been read already. A ctx that Deadline did not bound loses
// only its place in the queue.
func Lift(ctx context.Context) context.Context {
	admit.Release(ctx)
	l, _ := ctx.Value(liftKey{}).(*lift)
	if l == nil {
		return ctx
	}
	l.rc.SetReadDeadline(time.Time{})
	l.rc.SetWriteDeadline(time.Time{})
	lctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(l.base, func() { cancel(context.Cause(l.base)) })
	context.AfterFunc(lctx, func() { stop() })
	return lctx
}

// Healthz answers while the process lives, with the build's version and
// revision, so that an operator can tell which build a replica runs.
func Healthz() http.HandlerFunc {
	build := buildinfo.Read()
	return func(w http.ResponseWriter, _ *http.Request) {
		problem.WriteBody(w, nil, http.StatusOK, "application/json", map[string]string{"status": "ok", "version": build.Version, "revision": build.Revision})
	}
}

// Readyz answers 200 when database answers and 503 with a Retry-After
// otherwise. The rate limiter's Redis (redis, nil when there is none) is
// reported beside it, "ok" or "unreachable", but does not make a replica
// unready: without it requests pass unmetered, and every replica shares
// it, so failing them all would turn its outage into the service's.
func Readyz(database func(context.Context) error, redis func(context.Context) string, log *slog.Logger) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		state := make(chan string, 1)
		if redis != nil {
			go func() { state <- redis(ctx) }()
		}
		body := map[string]string{"status": "ok", "database": "ok"}
		status := http.StatusOK
		if err := database(ctx); err != nil {
			log.WarnContext(ctx, "readiness check failed", "err", err)
			problem.Headers(w, r, apperr.E(apperr.Unavailable, "the database is unreachable"))
			body["status"], body["database"], status = "unavailable", "unreachable", http.StatusServiceUnavailable
		}
		if redis != nil {
			body["redis"] = <-state
		}
		problem.WriteBody(w, nil, status, "application/json", body)
	}
}

// Admit lets at most n requests be worked on at once and queues the rest
// in the order they arrived (n <= 0: twice the CPUs the Go runtime uses).
// A saturated server otherwise works on every request at once, and Go's
// scheduler serves its runnable goroutines in no fair order: with one CPU
// and sixteen clients, the slowest 1% of reads waited 25-40 ms for the CPU
// while the median waited 2 ms (a runtime trace, bench/RESULTS.md). A
// queue in arrival order keeps the tail near the median. A request gives
// its place up while a transaction of its runs (a write: mostly waits on
// locks and the commit's flush; admit.Wait, called by database.Begin) and
// queues again after, and for good after holdFor, so that a slow
// statement or client (sending its body or reading its answer) cannot
// hold it long. A stream queues like any request, whatever its headers,
// and gives its place up when its endpoint lifts it (Lift). A request
// still queued when its deadline passes (Deadline) answers 503 with a
// Retry-After.
func Admit(n int) func(http.Handler) http.Handler { return admitWithin(n, holdFor) }

func admitWithin(n int, hold time.Duration) func(http.Handler) http.Handler {
	if n <= 0 {
		n = 2 * runtime.GOMAXPROCS(0)
	}
	slots := make(chan struct{}, n)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := admit.Enter(r.Context(), slots)
			if err != nil {
				problem.Write(w, r, apperr.E(apperr.Unavailable, "the server is busy; try again"))
				return
			}
			t := time.AfterFunc(hold, p.Leave)
			defer func() { t.Stop(); p.Leave() }()
			next.ServeHTTP(w, r.WithContext(admit.With(r.Context(), p)))
		})
	}
}

// holdFor is the longest a request keeps its place in Admit's queue: some
// twenty times what a page of the benchmark's reads takes, so that the
// normal request keeps it to the end and only the waiting ones give it up.
const holdFor = 20 * time.Millisecond
