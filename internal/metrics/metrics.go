// Package metrics exposes the service's Prometheus metrics: requests by
// route template, method and status for both transports, GraphQL
// operations by name, the database pool, the Go runtime and the process.
//
// The hot path is the HTTP middleware, run on every request. It looks its
// time series up in a copy-on-write map keyed by chi's route patterns (so
// no route string is joined and no label slice is built per request) and
// then only adds to atomic counters. Labels never hold raw paths or
// client text beyond GraphQL operation names, which are capped
// (MaxOperations).
//
// Other parts of the service report events of a request through its
// context: NoteRateLimited, NoteReplayed and NoteCost. The middleware
// counts them when the request ends, with the request's route.
package metrics

import (
	"database/sql"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Buckets are the latency histogram's upper bounds in seconds: from half
// a millisecond (a cached read) to ten seconds (an upload, a runaway
// query).
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// CostBuckets are the bounds of the GraphQL operation cost histogram.
// They are complexity points (graph/cost), up to the limit of 50,000
// (graph/endpoint.MaxComplexity).
var CostBuckets = []float64{1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000}

// Label values used where a request has no better one.
const (
	// Unmatched is the route of a request no route claimed (a 404 outside
	// any mounted router).
	Unmatched = "unmatched"
	// OtherMethod stands for a method outside the standard ones.
	OtherMethod = "OTHER"
	// Anonymous names a GraphQL operation without a name.
	Anonymous = "anonymous"
	// Invalid names a GraphQL request whose document did not parse or
	// validate, or named no operation of it.
	Invalid = "invalid"
	// OtherOperation stands for operation names beyond MaxOperations.
	OtherOperation = "other"
	// UnknownType is the operation type of an invalid request.
	UnknownType = "unknown"
)

// MaxOperations caps how many distinct GraphQL operation names become
// label values; later names are counted as OtherOperation. Names come
// from clients, so without a cap a client could create series without
// end. MaxOperationName does the same for very long names.
const (
	MaxOperations    = 200
	MaxOperationName = 100
)

// Metrics is one registry with the service's collectors; each server (and
// each test) makes its own, so nothing is global.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	gqlRequests *prometheus.CounterVec
	gqlDuration *prometheus.HistogramVec
	gqlCost     *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	replayed    *prometheus.CounterVec

	// httpSeries and gqlSeries are read without a lock on every request
	// and replaced, copied, under mu when a new label set appears.
	httpSeries atomic.Pointer[map[httpKey]*series]
	gqlSeries  atomic.Pointer[map[gqlKey]*series]
	mu         sync.Mutex
	operations map[string]bool // admitted operation names, under mu
}

// series is the pair of time series one label set adds to.
type series struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// httpKey identifies an HTTP label set by chi's route patterns (up to
// three nested routers; deeper ones join them into p[0] with n = -1),
// method and status.
type httpKey struct {
	p      [3]string
	n      int
	method string
	status int
}

type gqlKey struct {
	operation, opType string
	status            int
}

// New returns the metrics of one server, with the Go runtime, process and
// build collectors registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), operations: map[string]bool{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "http_requests_total",
		Help: "HTTP requests answered, by route template, method and status.",
	}, []string{"route", "method", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_request_duration_seconds",
		Help:    "Time from a request's arrival to its handler's return, by route template, method and status.",
		Buckets: Buckets,
	}, []string{"route", "method", "status"})
	m.gqlRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphql_requests_total",
		Help: "GraphQL requests that reached the executor, by operation name (anonymous, invalid, other), type and HTTP status.",
	}, []string{"operation", "type", "status"})
	m.gqlDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphql_request_duration_seconds",
		Help:    "Duration of GraphQL requests, by operation name, type and HTTP status.",
		Buckets: Buckets,
	}, []string{"operation", "type", "status"})
	m.gqlCost = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphql_operation_cost",
		Help:    "Computed cost of GraphQL operations, by operation name and type (reported through NoteCost).",
		Buckets: CostBuckets,
	}, []string{"operation", "type"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "http_rate_limited_total",
		Help: "Requests refused by a rate limit, by route template.",
	}, []string{"route"})
	m.replayed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "http_idempotent_replays_total",
		Help: "Requests answered with the stored response of an earlier request with the same Idempotency-Key, by route template.",
	}, []string{"route"})
	m.reg.MustRegister(m.requests, m.duration, m.gqlRequests, m.gqlDuration, m.gqlCost, m.rateLimited, m.replayed,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	m.httpSeries.Store(&map[httpKey]*series{})
	m.gqlSeries.Store(&map[gqlKey]*series{})
	return m
}

// WatchDB adds the statistics of a connection pool (the go_sql_* metrics:
// open, in use and idle connections, waits and their total duration,
// connections closed by the idle and lifetime limits), labelled
// db_name=name.
func (m *Metrics) WatchDB(db *sql.DB, name string) error {
	return m.reg.Register(collectors.NewDBStatsCollector(db, name))
}

// Registry is where collectors of other parts of the service register.
func (m *Metrics) Registry() prometheus.Registerer { return m.reg }

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Middleware counts and times every request by route template, method
// and status, and GraphQL requests also by operation. It must run inside
// chi's router (Use), which fills the route patterns it reads once the
// handler returns. It records the status through chi's response writer
// wrapper, and finds the request's Note in the context (NewContext),
// reusing those an outer middleware installed: then it allocates nothing.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww, ok := w.(middleware.WrapResponseWriter)
		if !ok {
			ww = middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		}
		n := noteOf(r.Context())
		if n == nil {
			ctx := &noteContext{Context: r.Context()}
			n, r = &ctx.note, r.WithContext(ctx)
		}
		next.ServeHTTP(ww, r)
		elapsed := time.Since(start).Seconds()
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK // the handler wrote nothing
		}
		rctx := chi.RouteContext(r.Context())
		s := m.httpSeriesFor(rctx, r.Method, status)
		s.count.Inc()
		s.duration.Observe(elapsed)
		if n.graphql {
			g := m.gqlSeriesFor(n.operation, n.opType, status)
			g.count.Inc()
			g.duration.Observe(elapsed)
			if n.hasCost {
				m.gqlCost.WithLabelValues(m.admitted(n.operation), n.opType).Observe(n.cost)
			}
		}
		if n.rateLimited {
			m.rateLimited.WithLabelValues(route(rctx)).Inc()
		}
		if n.replayed {
			m.replayed.WithLabelValues(route(rctx)).Inc()
		}
	})
}

// httpSeriesFor returns the series of a request, creating them on the
// first request of a label set.
func (m *Metrics) httpSeriesFor(rctx *chi.Context, method string, status int) *series {
	k := httpKey{method: normalMethod(method), status: status}
	var patterns []string
	if rctx != nil {
		patterns = rctx.RoutePatterns
	}
	if k.n = len(patterns); k.n > 3 {
		k.p[0], k.n = route(rctx), -1
	} else {
		copy(k.p[:], patterns)
	}
	return seriesOf(&m.mu, &m.httpSeries, k, func() []string {
		return []string{route(rctx), k.method, statusText(status)}
	}, m.requests, m.duration)
}

// gqlSeriesFor returns the series of a GraphQL request. A name past the
// cap is looked up under OtherOperation, so the map stays bounded too.
func (m *Metrics) gqlSeriesFor(operation, opType string, status int) *series {
	k := gqlKey{operation: operation, opType: opType, status: status}
	if s, ok := (*m.gqlSeries.Load())[k]; ok {
		return s
	}
	k.operation = m.admitted(operation)
	return seriesOf(&m.mu, &m.gqlSeries, k, func() []string {
		return []string{k.operation, opType, statusText(status)}
	}, m.gqlRequests, m.gqlDuration)
}

// seriesOf returns the series of key in the map at cache, creating them
// (with the label values labels returns) under mu on the first request of
// a label set: the map is copied, changed and swapped, so that readers
// never lock.
func seriesOf[K comparable](mu *sync.Mutex, cache *atomic.Pointer[map[K]*series], key K, labels func() []string,
	count *prometheus.CounterVec, duration *prometheus.HistogramVec) *series {
	if s, ok := (*cache.Load())[key]; ok {
		return s
	}
	mu.Lock()
	defer mu.Unlock()
	old := *cache.Load()
	if s, ok := old[key]; ok {
		return s
	}
	lv := labels()
	s := &series{count: count.WithLabelValues(lv...), duration: duration.WithLabelValues(lv...)}
	next := maps.Clone(old)
	next[key] = s
	cache.Store(&next)
	return s
}

// admitted returns the label value of an operation name: the name while
// fewer than MaxOperations names have been seen, OtherOperation after.
func (m *Metrics) admitted(operation string) string {
	switch operation {
	case Anonymous, Invalid, OtherOperation:
		return operation
	}
	if len(operation) > MaxOperationName {
		return OtherOperation
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.operations[operation] {
		return operation
	}
	if len(m.operations) >= MaxOperations {
		return OtherOperation
	}
	m.operations[operation] = true
	return operation
}

// route is the route template of a request, with the ids and wildcards
// as chi declares them ("/api/open-api/v1/orders/{id}", "/files/*").
func route(rctx *chi.Context) string {
	if p := rctx.RoutePattern(); p != "" {
		return p
	}
	return Unmatched
}

// normalMethod keeps the standard methods and folds any other into
// OtherMethod, since clients choose the method.
func normalMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return OtherMethod
}

func statusText(status int) string {
	const digits = "0123456789"
	if status < 100 || status > 999 {
		return "000"
	}
	return string([]byte{digits[status/100], digits[status/10%10], digits[status%10]})
}
