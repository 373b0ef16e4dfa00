package ratelimit

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/ratelimit/redistest"
)

// clock is a settable time for the limiter.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestMemory(limit int) (*Memory, *clock) {
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	m := NewMemory(limit)
	m.now = c.now
	return m, c
}

// TestLimiters runs the Limiter contract against both implementations:
// the same steps, on the same clock, must give the same statuses.
func TestLimiters(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		testContract(t, func(t *testing.T, limit int) (Limiter, *clock) {
			return newTestMemory(limit)
		})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t)
		testContract(t, func(t *testing.T, limit int) (Limiter, *clock) {
			return newTestRedis(t, srv, limit)
		})
	})
}

// testContract is the behaviour every Limiter has, on a clock the test
// moves: newLimiter returns a fresh limiter of limit units a minute, with
// no key used yet.
func testContract(t *testing.T, newLimiter func(t *testing.T, limit int) (Limiter, *clock)) {
	ctx := context.Background()
	type step struct {
		name    string
		advance time.Duration
		key     string
		take    int // > 0 takes, < 0 refunds
		charge  int // > 0 charges instead
		allowed bool
		remain  int
		reset   time.Duration
		retry   time.Duration
	}
	// 60 units a minute: one unit refills every second.
	for _, tc := range []struct {
		name  string
		limit int // 60 when 0
		steps []step
	}{
		{"a fresh key holds the whole budget", 0, []step{
			{name: "take 1", key: "a", take: 1, allowed: true, remain: 59, reset: time.Second},
			{name: "take 59", key: "a", take: 59, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 1 more", key: "a", take: 1, allowed: false, remain: 0, reset: time.Minute, retry: time.Second},
		}},
		{"the budget refills continuously", 0, []step{
			{name: "take all", key: "a", take: 60, allowed: true, remain: 0, reset: time.Minute},
			{name: "10 s later, 10 are back", advance: 10 * time.Second, key: "a", take: 10, allowed: true, remain: 0, reset: time.Minute},
			{name: "2.5 s later, 3 are not", advance: 2500 * time.Millisecond, key: "a", take: 3, allowed: false, remain: 2, reset: 57500 * time.Millisecond, retry: 500 * time.Millisecond},
			{name: "a minute later, it is whole", advance: time.Minute, key: "a", take: 60, allowed: true, remain: 0, reset: time.Minute},
		}},
		{"a refused take takes nothing", 0, []step{
			{name: "take 50", key: "a", take: 50, allowed: true, remain: 10, reset: 50 * time.Second},
			{name: "take 20", key: "a", take: 20, allowed: false, remain: 10, reset: 50 * time.Second, retry: 10 * time.Second},
			{name: "take 10", key: "a", take: 10, allowed: true, remain: 0, reset: time.Minute},
		}},
		{"keys are independent", 0, []step{
			{name: "a takes all", key: "a", take: 60, allowed: true, remain: 0, reset: time.Minute},
			{name: "b takes 1", key: "b", take: 1, allowed: true, remain: 59, reset: time.Second},
		}},
		{"refunds give back, never above the limit", 0, []step{
			{name: "take 30", key: "a", take: 30, allowed: true, remain: 30, reset: 30 * time.Second},
			{name: "refund 20", key: "a", take: -20, allowed: true, remain: 50, reset: 10 * time.Second},
			{name: "refund 100", key: "a", take: -100, allowed: true, remain: 60, reset: 0},
		}},
		{"a charge may go into debt, and takes wait until it is paid", 0, []step{
			{name: "take 50", key: "a", take: 50, allowed: true, remain: 10, reset: 50 * time.Second},
			{name: "charge 30", key: "a", charge: 30, allowed: true, remain: 0, reset: 80 * time.Second},
			{name: "take 1", key: "a", take: 1, allowed: false, remain: 0, reset: 80 * time.Second, retry: 21 * time.Second},
			{name: "21 s later, it is paid", advance: 21 * time.Second, key: "a", take: 1, allowed: true, remain: 0, reset: time.Minute},
		}},
		{"more than the budget takes the whole budget", 0, []step{
			{name: "take 1000", key: "a", take: 1000, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 1", key: "a", take: 1, allowed: false, remain: 0, reset: time.Minute, retry: time.Second},
		}},
		{"a refund of a fresh key changes nothing", 0, []step{
			{name: "refund 5", key: "a", take: -5, allowed: true, remain: 60, reset: 0},
			{name: "take 60", key: "a", take: 60, allowed: true, remain: 0, reset: time.Minute},
		}},
		// The default budget: a unit refills every 50 µs.
		{"the default budget, to the microsecond", 1_200_000, []step{
			{name: "take 1", key: "a", take: 1, allowed: true, remain: 1_199_999, reset: 50 * time.Microsecond},
			{name: "take 1,199,999", key: "a", take: 1_199_999, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 3 after 100 µs", advance: 100 * time.Microsecond, key: "a", take: 3, allowed: false, remain: 2, reset: time.Minute - 100*time.Microsecond, retry: 50 * time.Microsecond},
			{name: "take 2", key: "a", take: 2, allowed: true, remain: 0, reset: time.Minute},
			{name: "refund 600,000 after 7.5 s", advance: 7500 * time.Millisecond, key: "a", take: -600_000, allowed: true, remain: 750_000, reset: 22500 * time.Millisecond},
		}},
		// 7 a minute: a unit refills every 8.571428571 s (the budget is
		// 59.999999997 s long), fractions the implementations must carry
		// alike, to the microsecond.
		{"a budget that does not divide a minute", 7, []step{
			{name: "take 7", key: "a", take: 7, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 1 after 8.6 s", advance: 8600 * time.Millisecond, key: "a", take: 1, allowed: true, remain: 0, reset: 59971429 * time.Microsecond},
			{name: "take 1 after 8.5 s", advance: 8500 * time.Millisecond, key: "a", take: 1, allowed: false, remain: 0, reset: 51471429 * time.Microsecond, retry: 42857 * time.Microsecond},
			{name: "take 1 after 43 ms", advance: 43 * time.Millisecond, key: "a", take: 1, allowed: true, remain: 0, reset: 59999857 * time.Microsecond},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = 60
			}
			m, c := newLimiter(t, limit)
			for _, st := range tc.steps {
				c.advance(st.advance)
				var s Status
				var err error
				if st.charge > 0 {
					s, err = m.Charge(ctx, st.key, st.charge)
				} else if st.take > 0 {
					s, err = m.Take(ctx, st.key, st.take)
				} else {
					s, err = m.Refund(ctx, st.key, -st.take)
				}
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				// Memory counts in nanoseconds, Redis in microseconds.
				s.Reset, s.RetryAfter = s.Reset.Round(time.Microsecond), s.RetryAfter.Round(time.Microsecond)
				want := Status{Allowed: st.allowed, Limit: limit, Remaining: st.remain, Reset: st.reset, RetryAfter: st.retry}
				if s != want {
					t.Errorf("%s: %+v; want %+v", st.name, s, want)
				}
			}
		})
	}

	t.Run("takes at once take exactly the budget", func(t *testing.T) {
		m, _ := newLimiter(t, 60)
		var wg sync.WaitGroup
		var allowed, refused atomic.Int64
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					s, err := m.Take(ctx, "a", 1)
					switch {
					case err != nil:
						t.Error(err)
					case s.Allowed:
						allowed.Add(1)
					default:
						refused.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if allowed.Load() != 60 || refused.Load() != 140 {
			t.Errorf("200 takes of 1 at once: %d allowed, %d refused; want 60 and 140", allowed.Load(), refused.Load())
		}
	})
}

func TestMemoryForgetsIdleKeys(t *testing.T) {
	ctx := context.Background()
	m, c := newTestMemory(60)
	m.Take(ctx, "a", 1)
	m.Take(ctx, "b", 30)
	c.advance(2 * time.Second) // a is full again, b is not
	m.Take(ctx, "c", 1)        // the first take sweeps at once
	c.advance(time.Minute + time.Second)
	m.Take(ctx, "c", 1)
	if len(m.full) != 1 {
		t.Errorf("keys kept after a minute: %v; want only c", m.full)
	}
	if s, _ := m.Take(ctx, "b", 60); !s.Allowed {
		t.Errorf("b after a minute idle: %+v; want the whole budget", s)
	}
}

func TestSetHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Status
		want map[string]string
	}{
		{"allowed", Status{Allowed: true, Limit: 600, Remaining: 12, Reset: 1500 * time.Millisecond},
			map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "12", "RateLimit-Reset": "2", "Retry-After": ""}},
		{"refused", Status{Limit: 600, Remaining: 0, Reset: time.Minute, RetryAfter: 200 * time.Millisecond},
			map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "0", "RateLimit-Reset": "60", "Retry-After": "1"}},
		{"refused for longer", Status{Limit: 600, Remaining: 3, Reset: time.Minute, RetryAfter: 4100 * time.Millisecond},
			map[string]string{"RateLimit-Remaining": "3", "Retry-After": "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			tc.s.SetHeaders(h)
			for k, v := range tc.want {
				if got := h.Get(k); got != v {
					t.Errorf("%s = %q; want %q", k, got, v)
				}
			}
		})
	}
}

func TestMeter(t *testing.T) {
	ctx := context.Background()
	var nilMeter *Meter
	if err := nilMeter.Take(ctx, 5); err != nil {
		t.Errorf("nil meter Take = %v; want nil", err)
	}
	nilMeter.Refund(ctx, 5)
	nilMeter.Charge(ctx, 5)
	Rows(ctx, 10) // no meter in ctx: nothing happens

	lim, _ := newTestMemory(60)
	h := http.Header{}
	m := NewMeter(lim, Key(7), h)
	if err := m.Take(ctx, 50); err != nil || m.Refused || h.Get("RateLimit-Remaining") != "10" {
		t.Fatalf("Take 50 = %v, refused %v, remaining %q; want nil, false, 10", err, m.Refused, h.Get("RateLimit-Remaining"))
	}
	var rows int
	m.OnRows(func(ctx context.Context, n int) { rows = n; m.Refund(ctx, 40) })
	Rows(NewContext(ctx, m), 123)
	if rows != 123 || h.Get("RateLimit-Remaining") != "50" {
		t.Errorf("after Rows: rows %d, remaining %q; want 123, 50", rows, h.Get("RateLimit-Remaining"))
	}
	Settle(NewContext(ctx, m)) // settled once: nothing more
	if rows != 123 || h.Get("RateLimit-Remaining") != "50" {
		t.Errorf("after Settle: rows %d, remaining %q; want 123, 50 (settled once)", rows, h.Get("RateLimit-Remaining"))
	}
	err := m.Take(ctx, 55)
	if apperr.KindOf(err) != apperr.RateLimited || !m.Refused || h.Get("Retry-After") != "5" {
		t.Errorf("Take 55 = %v, refused %v, Retry-After %q; want RATE_LIMITED, true, 5", err, m.Refused, h.Get("Retry-After"))
	}
	const want = "rate limit exceeded: this request costs 55 units and the token has 50 of its 60 a minute left; retry in 5 s"
	if err.Error() != want {
		t.Errorf("message %q; want %q", err, want)
	}
	if _, ok := lim.full[Key(7)]; !ok {
		t.Errorf("the meter charged another key than %s: %v", Key(7), lim.full)
	}

	// Work dearer than was taken is charged, into debt if need be.
	h = http.Header{}
	m = NewMeter(lim, Key(8), h)
	m.Take(ctx, 50)
	m.Charge(ctx, 30)
	if h.Get("RateLimit-Remaining") != "0" || h.Get("RateLimit-Reset") != "80" {
		t.Errorf("after Charge 30: %v; want remaining 0, reset 80", h)
	}
	if err := m.Take(ctx, 1); apperr.KindOf(err) != apperr.RateLimited || h.Get("Retry-After") != "21" {
		t.Errorf("Take in debt = %v, Retry-After %q; want RATE_LIMITED, 21", err, h.Get("Retry-After"))
	}
}

// BenchmarkTake is the limiter's cost per request: one token at full
// speed, as the benchmark drives it.
func BenchmarkTake(b *testing.B) {
	ctx := context.Background()
	m := NewMemory(1 << 30)
	key := Key(1)
	b.ReportAllocs()
	for b.Loop() {
		m.Take(ctx, key, 1)
	}
}

// BenchmarkMeter is what a request pays in all: the key, the meter, a
// Take and the four headers.
func BenchmarkMeter(b *testing.B) {
	ctx := context.Background()
	m := NewMemory(1 << 30)
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		NewMeter(m, Key(1), h).Take(ctx, 1)
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"no rows", RowUnits(0), 1},
		{"a page of 100 rows", RowUnits(100), 1},
		{"101 rows", RowUnits(101), 2},
		{"1000 rows", RowUnits(1000), 10},
		{"a tiny query", OperationUnits(2, 0), 1},
		{"a page of 50 materials with 15 fields", OperationUnits(801, 0), 1},
		{"1001 points", OperationUnits(1001, 0), 2},
		{"the largest operation", OperationUnits(50000, 0), 50},
		{"one mutation", OperationUnits(3, 1), 11},
		{"two mutations", OperationUnits(3, 2), 21},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d units; want %d", tc.name, tc.got, tc.want)
		}
	}
}
