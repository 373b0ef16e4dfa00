// Package ratelimit keeps a budget of cost units per key (a token) that
// refills continuously, shared by both transports: REST charges a request
// what it reads, GraphQL an operation its computed complexity, against
// the same key, in one step per request. The Limiter interface has one
// method and two implementations the callers cannot tell apart, both the
// generic cell rate algorithm: Redis is go-redis/redis_rate's, shared by
// every replica, and Memory its in-process twin. Meter is the per-request
// side that the transports use, and it sets the RateLimit-* headers.
package ratelimit

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
)

// Window is the period a budget is stated for: a limit of L units refills
// at L per Window, and a key that has been idle for a Window holds all L.
const Window = time.Minute

// Limiter keeps the budgets. Implementations are safe for concurrent use;
// their errors are the store's own (an unreachable Redis), never a
// refusal, which is Status.Allowed false.
type Limiter interface {
	// Allow takes n units from key's budget when it holds n or more, and
	// otherwise takes nothing and answers Allowed false with RetryAfter.
	// A request of more than the whole budget asks for the whole budget,
	// so that no request is refused for ever.
	Allow(ctx context.Context, key string, n int) (Status, error)
}

// Status is a key's budget after an Allow, which the headers of the
// answer report.
type Status struct {
	Allowed bool
	// Limit is the budget per Window.
	Limit int
	// Remaining is what is left now, 0 when the key is in debt.
	Remaining int
	// Reset is how long until the budget is whole again.
	Reset time.Duration
	// RetryAfter is, for a refused Allow, how long until the units asked
	// for are there.
	RetryAfter time.Duration
}

// seconds rounds d up to whole seconds, as the headers carry them.
func seconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// SetHeaders writes the budget into h as RateLimit-Limit,
// RateLimit-Remaining and RateLimit-Reset (seconds until the budget is
// whole). Every answer carries them, so the values share one string and
// one array. A refusal's Retry-After is the error's (Err), which the
// answer's writer sets (internal/problem).
func (s Status) SetHeaders(h http.Header) {
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], int64(s.Limit), 10)
	i := len(b)
	b = strconv.AppendInt(b, int64(s.Remaining), 10)
	j := len(b)
	b = strconv.AppendInt(b, int64(seconds(s.Reset)), 10)
	text := string(b)
	v := make([]string, 3)
	v[0], v[1], v[2] = text[:i], text[i:j], text[j:]
	h["Ratelimit-Limit"] = v[0:1:1]
	h["Ratelimit-Remaining"] = v[1:2:2]
	h["Ratelimit-Reset"] = v[2:3:3]
}

// Err is the RateLimited error of a refused Allow of n units.
func (s Status) Err(n int) error {
	return apperr.E(apperr.RateLimited,
		"rate limit exceeded: this request costs %d units and the token has %d of its %d a minute left; retry in %d s",
		n, s.Remaining, s.Limit, max(1, seconds(s.RetryAfter))).After(max(time.Second, s.RetryAfter))
}

// Meter is one request's account with a Limiter: the request is charged
// once (Charge), by whichever part of the service first knows what it
// costs, and the meter keeps the response's RateLimit-* headers. A nil
// *Meter (rate limiting off, or an anonymous request) charges nothing.
type Meter struct {
	lim     Limiter
	key     string
	header  http.Header
	charged bool
	err     error
}

// NewMeter returns the meter of a request charged to key; header is the
// response's, which Charge sets.
func NewMeter(lim Limiter, key string, header http.Header) *Meter {
	return &Meter{lim: lim, key: key, header: header}
}

// Charge takes n units for the request, once: the first call asks the
// limiter (one round trip when the budgets are in Redis) and later calls
// return its outcome without asking again. Over budget, it returns a
// RateLimited error naming the units and the wait. A failing store lets
// the request through: an outage of the limiter must not become one of
// the service (the limiter reports and logs its outages).
func (m *Meter) Charge(ctx context.Context, n int) error {
	if m == nil {
		return nil
	}
	if m.charged {
		return m.err
	}
	m.charged = true
	s, err := m.lim.Allow(ctx, m.key, max(n, 1))
	if err != nil {
		return nil
	}
	s.SetHeaders(m.header)
	if !s.Allowed {
		m.err = s.Err(n)
	}
	return m.err
}

// Charged reports whether the request has been charged.
func (m *Meter) Charged() bool { return m != nil && m.charged }

type ctxKey struct{}

// NewContext returns a copy of ctx that carries m.
func NewContext(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, ctxKey{}, m)
}

// FromContext returns the meter in ctx, or nil.
func FromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(ctxKey{}).(*Meter)
	return m
}

// Key is the budget key of an API token record.
func Key(tokenID int) string {
	return "token:" + strconv.Itoa(tokenID)
}
