package ratelimit

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/testkit"
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

// TestLimiters runs the Limiter contract against both implementations.
// Memory runs every case on a clock the test moves; Redis, whose clock is
// its own, runs the cases that need no time to pass, with its durations
// held to the same figures within a tolerance of the test's own run time.
func TestLimiters(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		testContract(t, true, func(t *testing.T, limit int) (Limiter, *clock) {
			return newTestMemory(limit)
		})
	})
	t.Run("redis", func(t *testing.T) {
		srv := testkit.StartRedis(t)
		testContract(t, false, func(t *testing.T, limit int) (Limiter, *clock) {
			r, _ := newRedis(t, srv, limit)
			return r, nil
		})
	})
}

// testContract is the behaviour every Limiter has: newLimiter returns a
// fresh limiter of limit units a minute, with no key used yet, and the
// clock it runs on (nil: its own, which the test cannot move; clocked is
// false then, and the cases that move the clock are left to Memory).
func testContract(t *testing.T, clocked bool, newLimiter func(t *testing.T, limit int) (Limiter, *clock)) {
	ctx := context.Background()
	type step struct {
		name    string
		advance time.Duration
		key     string
		take    int
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
		{"more than the budget takes the whole budget", 0, []step{
			{name: "take 1000", key: "a", take: 1000, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 1", key: "a", take: 1, allowed: false, remain: 0, reset: time.Minute, retry: time.Second},
		}},
		// The default budget: a unit refills every 50 µs.
		{"the default budget", 1_200_000, []step{
			{name: "take 1", key: "a", take: 1, allowed: true, remain: 1_199_999, reset: 50 * time.Microsecond},
			{name: "take 1,199,999", key: "a", take: 1_199_999, allowed: true, remain: 0, reset: time.Minute},
			{name: "take 3 after 100 µs", advance: 100 * time.Microsecond, key: "a", take: 3, allowed: false, remain: 2, reset: time.Minute - 100*time.Microsecond, retry: 50 * time.Microsecond},
			{name: "take 2", key: "a", take: 2, allowed: true, remain: 0, reset: time.Minute},
		}},
	} {
		if !clocked && slices.ContainsFunc(tc.steps, func(st step) bool { return st.advance > 0 }) {
			continue // the case moves the clock; TestRedisRefills covers Redis's
		}
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = 60
			}
			m, c := newLimiter(t, limit)
			start := time.Now()
			for _, st := range tc.steps {
				if c != nil {
					c.advance(st.advance)
				}
				s, err := m.Allow(ctx, st.key, st.take)
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				want := Status{Allowed: st.allowed, Limit: limit, Remaining: st.remain, Reset: st.reset, RetryAfter: st.retry}
				// On Redis's clock the test's own run time has passed:
				// its durations may be that much shorter, and a unit
				// may have come back.
				slack := time.Microsecond
				if c == nil {
					slack = time.Since(start) + 10*time.Millisecond
				}
				if s.Allowed != want.Allowed || s.Limit != want.Limit || !near(s.Reset, want.Reset, slack) || !near(s.RetryAfter, want.RetryAfter, slack) ||
					s.Remaining < want.Remaining || s.Remaining > want.Remaining+int(slack/(time.Minute/time.Duration(limit))) {
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
					s, err := m.Allow(ctx, "a", 1)
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

// near reports whether got is want, or up to slack less (time passed).
func near(got, want, slack time.Duration) bool {
	return got <= want+time.Microsecond && got >= want-slack
}

func TestMemoryForgetsIdleKeys(t *testing.T) {
	ctx := context.Background()
	m, c := newTestMemory(60)
	m.Allow(ctx, "a", 1)
	m.Allow(ctx, "b", 30)
	c.advance(2 * time.Second) // a is full again, b is not
	m.Allow(ctx, "c", 1)       // the first take sweeps at once
	c.advance(time.Minute + time.Second)
	m.Allow(ctx, "c", 1)
	if len(m.full) != 1 {
		t.Errorf("keys kept after a minute: %v; want only c", m.full)
	}
	if s, _ := m.Allow(ctx, "b", 60); !s.Allowed {
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
			map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "0", "RateLimit-Reset": "60", "Retry-After": ""}},
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

// TestMeter checks that a request is charged once, whatever asks, that a
// refusal is a RateLimited error carrying its wait, and that the headers
// follow the budget.
func TestMeter(t *testing.T) {
	ctx := context.Background()
	var nilMeter *Meter
	if err := nilMeter.Charge(ctx, 5); err != nil || nilMeter.Charged() {
		t.Errorf("nil meter Charge = %v, charged %v; want nil, false", err, nilMeter.Charged())
	}

	lim, _ := newTestMemory(60)
	h := http.Header{}
	m := NewMeter(lim, Key(7), h)
	if err := m.Charge(ctx, 50); err != nil || !m.Charged() || h.Get("RateLimit-Remaining") != "10" {
		t.Fatalf("Charge 50 = %v, charged %v, remaining %q; want nil, true, 10", err, m.Charged(), h.Get("RateLimit-Remaining"))
	}
	if err := m.Charge(ctx, 50); err != nil || h.Get("RateLimit-Remaining") != "10" {
		t.Errorf("a second Charge = %v, remaining %q; want nil and nothing taken", err, h.Get("RateLimit-Remaining"))
	}
	if _, ok := lim.full[Key(7)]; !ok {
		t.Errorf("the meter charged another key than %s: %v", Key(7), lim.full)
	}

	h = http.Header{}
	m = NewMeter(lim, Key(7), h)
	err := m.Charge(ctx, 15)
	es := apperr.Errors(err)
	if len(es) != 1 || es[0].Kind != apperr.RateLimited || es[0].Wait != 5*time.Second || h.Get("RateLimit-Remaining") != "10" {
		t.Fatalf("Charge 15 of 10 left = %v (%+v), remaining %q; want RATE_LIMITED with a 5 s wait, 10 left", err, es, h.Get("RateLimit-Remaining"))
	}
	const want = "rate limit exceeded: this request costs 15 units and the token has 10 of its 60 a minute left; retry in 5 s"
	if err.Error() != want {
		t.Errorf("message %q; want %q", err, want)
	}
	if again := m.Charge(ctx, 1); again != err {
		t.Errorf("a refused request charged again = %v; want its refusal, not a second try", again)
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
		m.Allow(ctx, key, 1)
	}
}

// BenchmarkMeter is what a request pays in all: the key, the meter, an
// Allow and the three headers.
func BenchmarkMeter(b *testing.B) {
	ctx := context.Background()
	m := NewMemory(1 << 30)
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		NewMeter(m, Key(1), h).Charge(ctx, 1)
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
