// Package ratelimit keeps a budget of cost units per key (a token) that
// refills continuously, shared by both transports: REST charges a request
// what it reads, GraphQL an operation its computed complexity, against
// the same key. The Limiter interface is small, with two implementations
// the callers cannot tell apart: Memory keeps the budgets in the process,
// Redis shares them between replicas. Meter is the per-request side that
// the transports use, and it sets the RateLimit-* and Retry-After headers.
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

// Limiter takes and refunds units of a key's budget. Implementations are
// safe for concurrent use; their errors are the store's own (an
// unreachable Redis), never a refusal, which is Status.Allowed false.
type Limiter interface {
	// Take takes n units from key's budget when it holds n or more, and
	// otherwise takes nothing and answers Allowed false with RetryAfter.
	Take(ctx context.Context, key string, n int) (Status, error)
	// Refund gives n units back to key's budget (never above the limit),
	// for work that turned out cheaper than was taken for it.
	Refund(ctx context.Context, key string, n int) (Status, error)
	// Charge takes n more units from key's budget whatever it holds, for
	// work already done that turned out dearer than was taken for it (a
	// per_page=-1 list longer than its ceiling): the key may go into
	// debt, and its Takes are refused until the debt has refilled.
	Charge(ctx context.Context, key string, n int) (Status, error)
}

// Status is a key's budget after a Take or Refund.
type Status struct {
	Allowed bool
	// Limit is the budget per Window.
	Limit int
	// Remaining is what is left now, 0 when the key is in debt.
	Remaining int
	// Reset is how long until the budget is whole again.
	Reset time.Duration
	// RetryAfter is, for a refused Take, how long until the units asked
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

// Err is the RateLimited error of a refused Take of n units.
func (s Status) Err(n int) error {
	return apperr.E(apperr.RateLimited,
		"rate limit exceeded: this request costs %d units and the token has %d of its %d a minute left; retry in %d s",
		n, s.Remaining, s.Limit, max(1, seconds(s.RetryAfter))).After(max(time.Second, s.RetryAfter))
}

// Meter is one request's account with a Limiter: the transports take from
// it what the request costs and refund what it turned out not to need,
// and it keeps the response headers up to date. A nil *Meter (rate
// limiting off, or an anonymous request) takes nothing and refuses
// nothing.
//
// A request costs one call of the limiter (one round trip to Redis) when
// its cost is known at once (REST), and also when it is known in two steps
// (GraphQL: ReadUnits on arrival, the operation's complexity later): the
// first step is owed (Owe) and taken with the second, or paid alone (Pay)
// when the request ends without one. Only a REST list with per_page=-1
// calls twice, to settle what its rows cost (Refund or Charge).
type Meter struct {
	lim    Limiter
	key    string
	header http.Header
	// owed is what the next Take adds to its own units.
	owed int
	// Status is the budget after the last Take or Refund.
	Status Status
	// Refused is set when a Take was refused: the transport answers 429.
	Refused bool
	// onRows, when set, settles the request's cost once it knows how
	// many rows it returns (see Rows).
	onRows func(ctx context.Context, rows int)
}

// NewMeter returns the meter of a request charged to key; header is the
// response's, which Take and Refund keep up to date.
func NewMeter(lim Limiter, key string, header http.Header) *Meter {
	return &Meter{lim: lim, key: key, header: header}
}

// Owe adds n units to the next Take (or Pay) without calling the limiter.
func (m *Meter) Owe(n int) {
	if m != nil {
		m.owed += n
	}
}

// Owed reports whether units are owed that no Take has taken yet.
func (m *Meter) Owed() bool { return m != nil && m.owed > 0 }

// Pay takes what is owed, if anything, as Take does.
func (m *Meter) Pay(ctx context.Context) error { return m.Take(ctx, 0) }

// Take takes n units and whatever is owed; it returns a RateLimited error
// naming them all (and sets Refused and Retry-After) when the budget holds
// fewer, and then takes none of them. A failing store lets the request
// through: an outage of the limiter must not become one of the service
// (the limiter reports and logs its outages).
func (m *Meter) Take(ctx context.Context, n int) error {
	if m == nil {
		return nil
	}
	n, m.owed = n+m.owed, 0
	if n <= 0 {
		return nil
	}
	s, err := m.lim.Take(ctx, m.key, n)
	if err != nil {
		return nil
	}
	m.Status = s
	s.SetHeaders(m.header)
	if !s.Allowed {
		m.Refused = true
		return s.Err(n)
	}
	return nil
}

// Refund gives n units back.
func (m *Meter) Refund(ctx context.Context, n int) {
	if m != nil {
		m.settle(ctx, n, m.lim.Refund)
	}
}

// Charge takes n more units for work already done, even beyond what the
// budget holds (Limiter.Charge).
func (m *Meter) Charge(ctx context.Context, n int) {
	if m != nil {
		m.settle(ctx, n, m.lim.Charge)
	}
}

// settle corrects the request's cost by n units through op (a Refund or
// a Charge of the limiter), unless the request was refused; a failing
// store changes nothing.
func (m *Meter) settle(ctx context.Context, n int, op func(ctx context.Context, key string, n int) (Status, error)) {
	if n <= 0 || m.Refused {
		return
	}
	if s, err := op(ctx, m.key, n); err == nil {
		m.Status = s
		s.SetHeaders(m.header)
	}
}

// OnRows sets what the meter does when the request reports the rows it
// returns (Rows): REST settles the cost of per_page=-1 there.
func (m *Meter) OnRows(f func(ctx context.Context, rows int)) {
	if m != nil {
		m.onRows = f
	}
}

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

// Rows reports that the request returns rows rows of a list whose size
// it did not know in advance (per_page=-1); the data layer calls it, and
// the transport that asked (OnRows) settles the cost, once.
func Rows(ctx context.Context, rows int) {
	if m := FromContext(ctx); m != nil && m.onRows != nil {
		f := m.onRows
		m.onRows = nil
		f(ctx, rows)
	}
}

// Settle settles a request whose rows were never reported (it failed
// before reading its list) as one that returned none.
func Settle(ctx context.Context) { Rows(ctx, 0) }

// Key is the budget key of an API token record.
func Key(tokenID int) string {
	return "token:" + strconv.Itoa(tokenID)
}
