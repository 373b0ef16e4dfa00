package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/ratelimit/redistest"
	"github.com/configurator/catalogue/internal/testkit"
)

// newTestRedis returns a Redis limiter of limit units a minute on srv, on
// the test's clock, with keys of its own.
func newTestRedis(t *testing.T, srv *redistest.Server, limit int) (*Redis, *clock) {
	t.Helper()
	r, _ := newRedis(t, srv, limit)
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	r.now = c.now
	return r, c
}

// newRedis returns a Redis limiter on Redis's clock and the buffer its log
// goes to.
func newRedis(t *testing.T, srv *redistest.Server, limit int) (*Redis, *testkit.SyncBuffer) {
	t.Helper()
	opts, err := RedisOptions(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	r := NewRedis(opts, limit, slog.New(slog.NewTextHandler(logs, nil)))
	r.prefix = KeyPrefix + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	t.Cleanup(func() { r.Close() })
	return r, logs
}

func TestRedisOptions(t *testing.T) {
	o, err := RedisOptions("redis://:secret@cache.internal:6380/2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Addr != "cache.internal:6380" || o.DB != 2 || o.Password != "secret" || o.DialTimeout != 500*time.Millisecond ||
		o.ReadTimeout != 500*time.Millisecond || o.MaxRetries != -1 || !o.DisableIdentity || o.Protocol != 2 {
		t.Errorf("options %+v; want the URL's address, db and password, 500 ms timeouts, no retries, RESP2", o)
	}
	o, err = RedisOptions("redis://127.0.0.1?dial_timeout=2s&max_retries=2")
	if err != nil || o.DialTimeout != 2*time.Second || o.MaxRetries != 2 || o.ReadTimeout != 500*time.Millisecond {
		t.Errorf("the URL's own settings: %+v, %v; want them kept", o, err)
	}
	for _, bad := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1/x", "redis://127.0.0.1?nope=1"} {
		if _, err := RedisOptions(bad); err == nil {
			t.Errorf("RedisOptions(%q) accepted it", bad)
		}
	}
}

// TestRedisKeys: a key lives in Redis, under the prefix, only as long as
// its bucket is not full (plus a second), and on Redis's own clock.
func TestRedisKeys(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	r, _ := newTestRedis(t, srv, 60)
	key := r.prefix + Key(7)
	if _, err := r.Take(ctx, Key(7), 2); err != nil {
		t.Fatal(err)
	}
	ttl, _ := strconv.Atoi(srv.Do(t, "PTTL", key))
	if ttl <= 1000 || ttl > 3000 {
		t.Errorf("PTTL %s after taking 2 s of budget = %d ms; want 2 s and the second of slack at most", key, ttl)
	}
	if _, err := r.Refund(ctx, Key(7), 2); err != nil {
		t.Fatal(err)
	}
	if got := srv.Do(t, "EXISTS", key); got != "0" {
		t.Errorf("EXISTS %s after a refund to full = %s; want 0", key, got)
	}

	// On Redis's clock: the whole budget, then a refusal until a unit is
	// back (a second at most).
	real, _ := newRedis(t, srv, 60)
	if s, err := real.Take(ctx, "k", 60); err != nil || !s.Allowed || s.Remaining != 0 {
		t.Fatalf("take 60 of 60: %+v, %v", s, err)
	}
	s, err := real.Take(ctx, "k", 1)
	if err != nil || s.Allowed || s.RetryAfter <= 0 || s.RetryAfter > time.Second || s.Reset > time.Minute || s.Reset < 59*time.Second {
		t.Errorf("take 1 more: %+v, %v; want refused, retry within a second", s, err)
	}
}

// TestRedisOutage: with Redis killed the limiter fails open (its calls
// fail, the Meter lets requests through without RateLimit headers), logs
// the outage once (and again at most once per LogEvery), counts what went
// unmetered, tries Redis once per ProbeEvery, and meters again once Redis
// is back. A frozen Redis (every process stopped, as in a partition)
// fails the calls at its timeouts instead of hanging them.
func TestRedisOutage(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	r, logs := newRedis(t, srv, 60)
	r.probeEvery, r.logEvery = time.Hour, time.Hour // the test moves them on itself
	if s, err := r.Take(ctx, "a", 50); err != nil || !s.Allowed {
		t.Fatalf("take 50: %+v, %v", s, err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}

	srv.Kill()
	if _, err := r.Take(ctx, "a", 1); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("take with Redis killed: %v; want the connection's error", err)
	}
	for range 5 {
		if _, err := r.Take(ctx, "a", 1); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("take during the outage: %v; want ErrUnavailable without trying Redis", err)
		}
	}
	r.Refund(ctx, "a", 1)
	h := http.Header{}
	m := NewMeter(r, Key(1), h)
	if err := m.Take(ctx, 1); err != nil || m.Refused || h.Get("RateLimit-Limit") != "" {
		t.Errorf("meter during the outage: %v, refused %v, headers %v; want the request let through, without headers", err, m.Refused, h)
	}
	if st := r.Stats(); st.Up || st.Unmetered != 7 || st.Failures != 8 {
		t.Errorf("stats during the outage: %+v; want down, 7 takes unmetered, 8 failures", st)
	}
	if n := strings.Count(logs.String(), "Redis is unreachable"); n != 1 || strings.Contains(logs.String(), "still unreachable") {
		t.Errorf("logged during the outage:\n%s\nwant one warning", logs)
	}
	r.loggedAt.Add(-int64(time.Hour))
	r.Take(ctx, "a", 1)
	if !strings.Contains(logs.String(), "level=WARN msg=\"rate limiter: Redis is still unreachable; requests pass unmetered\" err=\"rate limiter: Redis is unreachable\" unmetered=8") {
		t.Errorf("an hour into the outage, logged:\n%s\nwant a second warning with the count", logs)
	}

	// Back: the next probe meters again. The killed Redis kept nothing,
	// so the budget is whole.
	srv.Start()
	if _, err := r.Take(ctx, "a", 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("take before the next probe: %v; want ErrUnavailable", err)
	}
	r.retryAt.Store(0)
	s, err := r.Take(ctx, "a", 1)
	if err != nil || !s.Allowed || s.Remaining != 59 {
		t.Fatalf("take once Redis is back: %+v, %v; want metered, 59 left", s, err)
	}
	if st := r.Stats(); !st.Up || !strings.Contains(logs.String(), "Redis answers again; requests are metered\" unmetered=9") {
		t.Errorf("after the outage: %+v, logged:\n%s\nwant up, and the end of the outage logged with its count", st, logs)
	}

	// A Ping finds an outage too, and its end.
	srv.Kill()
	if err := r.Ping(ctx); err == nil || r.Stats().Up {
		t.Errorf("ping with Redis killed: %v, %+v; want an error and the limiter down", err, r.Stats())
	}
	srv.Start()
	if err := r.Ping(ctx); err != nil || !r.Stats().Up {
		t.Errorf("ping with Redis back: %v, %+v; want ok and up", err, r.Stats())
	}

	// Frozen: the call gives up at the read timeout (500 ms).
	srv.Freeze()
	start := time.Now()
	_, err = r.Take(ctx, "a", 1)
	srv.Thaw()
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("take with Redis frozen: %v after %s; want an error at the read timeout", err, time.Since(start))
	}
}

// BenchmarkRedisTake is what a request pays the Redis limiter: one
// EVALSHA round trip on loopback, from one goroutine.
func BenchmarkRedisTake(b *testing.B) {
	srv := redistest.Start(b)
	opts, err := RedisOptions(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	r := NewRedis(opts, 1<<30, slog.New(slog.DiscardHandler))
	defer r.Close()
	ctx := context.Background()
	key := Key(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Take(ctx, key, 1); err != nil {
			b.Fatal(err)
		}
	}
}
