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

	"github.com/configurator/catalogue/internal/testkit"
)

// newRedis returns a Redis limiter on Redis's clock and the buffer its log
// goes to.
func newRedis(t *testing.T, srv *testkit.Redis, limit int) (*Redis, *testkit.SyncBuffer) {
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

// TestRedisKeys: a budget lives in Redis under redis_rate's prefix and
// ours, only as long as its bucket is not full (rounded up to a second).
func TestRedisKeys(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	r, _ := newRedis(t, srv, 60)
	key := "rate:" + r.prefix + Key(7)
	if _, err := r.Allow(ctx, Key(7), 2); err != nil {
		t.Fatal(err)
	}
	ttl, _ := strconv.Atoi(srv.Do(t, "PTTL", key))
	if ttl <= 1000 || ttl > 2000 {
		t.Errorf("PTTL %s after taking 2 s of budget = %d ms; want 2 s at most", key, ttl)
	}
}

// TestRedisRefills: on Redis's clock the budget comes back as time
// passes, a unit every 10 ms at 6,000 a minute.
func TestRedisRefills(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	r, _ := newRedis(t, srv, 6000)
	if s, err := r.Allow(ctx, "k", 6000); err != nil || !s.Allowed {
		t.Fatalf("take the whole budget: %+v, %v", s, err)
	}
	if s, err := r.Allow(ctx, "k", 20); err != nil || s.Allowed || s.RetryAfter <= 0 || s.RetryAfter > 200*time.Millisecond {
		t.Fatalf("take 20 more at once: %+v, %v; want refused, retry within 200 ms", s, err)
	}
	time.Sleep(250 * time.Millisecond)
	if s, err := r.Allow(ctx, "k", 20); err != nil || !s.Allowed {
		t.Errorf("take 20 after 250 ms: %+v, %v; want the 25 units back to cover it", s, err)
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
	srv := testkit.StartRedis(t)
	r, logs := newRedis(t, srv, 60)
	r.outage.ProbeEvery, r.logEvery = time.Hour, time.Hour // the test moves them on itself
	if s, err := r.Allow(ctx, "a", 50); err != nil || !s.Allowed {
		t.Fatalf("take 50: %+v, %v", s, err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}

	srv.Kill()
	if _, err := r.Allow(ctx, "a", 1); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("take with Redis killed: %v; want the connection's error", err)
	}
	for range 5 {
		if _, err := r.Allow(ctx, "a", 1); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("take during the outage: %v; want ErrUnavailable without trying Redis", err)
		}
	}
	h := http.Header{}
	m := NewMeter(r, Key(1), h)
	if err := m.Charge(ctx, 1); err != nil || h.Get("RateLimit-Limit") != "" {
		t.Errorf("meter during the outage: %v, headers %v; want the request let through, without headers", err, h)
	}
	if st := r.Stats(); st.Up || st.Unmetered != 7 || st.Failures != 7 {
		t.Errorf("stats during the outage: %+v; want down, 7 calls unmetered, 7 failures", st)
	}
	if n := strings.Count(logs.String(), "Redis is unreachable"); n != 1 || strings.Contains(logs.String(), "still unreachable") {
		t.Errorf("logged during the outage:\n%s\nwant one warning", logs)
	}
	r.loggedAt.Add(-int64(time.Hour))
	r.Allow(ctx, "a", 1)
	if !strings.Contains(logs.String(), "level=WARN msg=\"rate limiter: Redis is still unreachable; requests pass unmetered\" err=\"rate limiter: Redis is unreachable\" unmetered=8") {
		t.Errorf("an hour into the outage, logged:\n%s\nwant a second warning with the count", logs)
	}

	// Back: the next probe meters again. The killed Redis kept nothing,
	// so the budget is whole.
	srv.Start()
	if _, err := r.Allow(ctx, "a", 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("take before the next probe: %v; want ErrUnavailable", err)
	}
	r.outage.retryAt.Store(0)
	s, err := r.Allow(ctx, "a", 1)
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
	_, err = r.Allow(ctx, "a", 1)
	srv.Thaw()
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("take with Redis frozen: %v after %s; want an error at the read timeout", err, time.Since(start))
	}
}

// BenchmarkRedisTake is what a request pays the Redis limiter: one
// EVALSHA round trip on loopback, from one goroutine.
func BenchmarkRedisTake(b *testing.B) {
	srv := testkit.StartRedis(b)
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
		if _, err := r.Allow(ctx, key, 1); err != nil {
			b.Fatal(err)
		}
	}
}
