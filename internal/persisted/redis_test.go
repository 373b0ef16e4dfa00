package persisted

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/testkit"
)

// newRedis returns a cache in srv with a Memory of its own, as a replica
// has, and the buffer its log goes to.
func newRedis(t *testing.T, srv *testkit.Redis) (*Redis, *testkit.SyncBuffer) {
	t.Helper()
	opts, err := ratelimit.RedisOptions(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	r := NewRedis(opts, NewMemory(DefaultMemoryBytes), slog.New(slog.NewTextHandler(logs, nil)))
	t.Cleanup(func() { r.Close() })
	return r, logs
}

// TestRedisShared: what one replica adds, another gets, from Redis under
// the prefix with the TTL.
func TestRedisShared(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	one, _ := newRedis(t, srv)
	two, _ := newRedis(t, srv)
	h := Hash(docA)
	if doc, ok := two.Get(ctx, h); ok {
		t.Fatalf("Get before Add = %q; want none", doc)
	}
	one.Add(ctx, h, docA)
	if doc, ok := two.Get(ctx, h); !ok || doc != docA {
		t.Fatalf("the other replica's Get = %q, %v; want the document", doc, ok)
	}
	if got := srv.Do(t, "GET", KeyPrefix+h); got != docA {
		t.Errorf("GET %s%s = %q; want the document", KeyPrefix, h, got)
	}
	ttl, _ := strconv.Atoi(srv.Do(t, "TTL", KeyPrefix+h))
	if ttl <= 0 || ttl > int(TTL.Seconds()) {
		t.Errorf("TTL = %d s; want at most %v", ttl, TTL)
	}
	// The second replica keeps what it fetched: it answers without Redis.
	srv.Kill()
	if doc, ok := two.Get(ctx, h); !ok || doc != docA {
		t.Errorf("Get of a fetched document with Redis down = %q, %v; want it from the process", doc, ok)
	}
}

// TestRedisForeignValue: a value under a document's key that is not the
// document of that hash (written by something else than this service) is
// never served.
func TestRedisForeignValue(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	r, _ := newRedis(t, srv)
	srv.Do(t, "SET", KeyPrefix+Hash(docA), docB)
	if doc, ok := r.Get(ctx, Hash(docA)); ok {
		t.Errorf("Get = %q; want none for a value that is not the document of the hash", doc)
	}
	srv.Do(t, "SET", KeyPrefix+Hash(docA), docA)
	if doc, ok := r.Get(ctx, Hash(docA)); !ok || doc != docA {
		t.Errorf("Get = %q, %v; want the document once Redis holds it", doc, ok)
	}
}

// TestRedisDown: with Redis down the cache keeps documents in the process,
// logs the outage once, and shares documents again once Redis is back.
func TestRedisDown(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	r, logs := newRedis(t, srv)
	r.outage.ProbeEvery = 0 // every call tries Redis: the test needs no clock
	srv.Kill()

	r.Add(ctx, Hash(docA), docA)
	if doc, ok := r.Get(ctx, Hash(docA)); !ok || doc != docA {
		t.Fatalf("Get with Redis down = %q, %v; want the document from the process", doc, ok)
	}
	if _, ok := r.Get(ctx, Hash(docB)); ok {
		t.Fatal("Get of an unknown document with Redis down found one")
	}
	r.Add(ctx, Hash(docB), docB)
	if r.Up() {
		t.Error("Up() with Redis down")
	}
	if n := strings.Count(logs.String(), "Redis is unreachable"); n != 1 {
		t.Errorf("the outage was logged %d times; want once:\n%s", n, logs)
	}

	srv.Start()
	other, _ := newRedis(t, srv)
	const docC = "{ __typename }"
	r.Add(ctx, Hash(docC), docC)
	if !r.Up() || !strings.Contains(logs.String(), "Redis answers again") {
		t.Errorf("after Redis came back: Up() = %v, log:\n%s", r.Up(), logs)
	}
	if doc, ok := other.Get(ctx, Hash(docC)); !ok || doc != docC {
		t.Errorf("another replica's Get after the outage = %q, %v; want the document", doc, ok)
	}
}

// TestRedisProbe: while Redis is down, only one call per probeEvery tries
// it; the others answer from the process at once.
func TestRedisProbe(t *testing.T) {
	ctx := context.Background()
	srv := testkit.StartRedis(t)
	r, _ := newRedis(t, srv)
	r.outage.ProbeEvery = 1 << 62 // no second try within the test
	srv.Kill()
	r.Get(ctx, Hash(docA)) // fails: the outage starts
	srv.Start()
	other, _ := newRedis(t, srv)
	other.Add(ctx, Hash(docA), docA)
	if doc, ok := r.Get(ctx, Hash(docA)); ok {
		t.Errorf("Get during the outage asked Redis (%q); want the process's cache only", doc)
	}
}
