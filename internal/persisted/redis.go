package persisted

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"

	"github.com/configurator/catalogue/internal/ratelimit"
)

// The Redis APQ cache's figures.
const (
	// KeyPrefix starts the key of every document in Redis, beside the
	// rate limiter's "rate:catalogue:ratelimit:" keys.
	KeyPrefix = "catalogue:apq:"
	// TTL is how long Redis keeps a document after it was registered: a
	// client whose document expired is answered PERSISTED_QUERY_NOT_FOUND
	// and sends it again, as APQ clients do, so what Redis holds is
	// bounded by a day of registrations of at most the endpoint's
	// document size each.
	TTL = 24 * time.Hour
	// Timeout bounds one Redis call: a request waits for it, and a
	// document that cannot be fetched in time is fetched from the client.
	Timeout = 250 * time.Millisecond
	// ProbeEvery is how often, while Redis is unreachable, one call tries
	// it again; the others use the process's own cache at once.
	ProbeEvery = time.Second
)

// Redis is an APQ cache shared by every replica: documents live in Redis
// under KeyPrefix and their hash, for TTL, and in a Memory of the process
// in front of it. A document is named by its hash, which the endpoint
// checks before it adds one, so a key's value never changes and the
// process's copy is never stale: Get asks Redis only for what the process
// has not seen, and Add writes both.
//
// When Redis fails, the cache falls back to the process's Memory rather
// than failing the request: Get answers what the process holds (a client
// whose document is elsewhere sends it again), Add keeps the document
// in the process. The outage is logged once when it starts and once when
// it ends; while it lasts, one call per ProbeEvery tries Redis and the
// others do not wait for it.
type Redis struct {
	client *redis.Client
	local  *Memory
	log    *slog.Logger
	outage ratelimit.Outage
}

var _ graphql.Cache[string] = (*Redis)(nil)

// NewRedis returns a cache in the Redis that opts names (the rate
// limiter's ratelimit.RedisOptions of REDIS_URL), with local in front of
// it. It does not connect: the first call does, and a Redis that is down
// at start is an outage like any other.
func NewRedis(opts *redis.Options, local *Memory, log *slog.Logger) *Redis {
	ratelimit.QuietRedisLog()
	return &Redis{client: redis.NewClient(opts), local: local, log: log, outage: ratelimit.Outage{ProbeEvery: ProbeEvery}}
}

// Get returns the document of key, from the process or from Redis.
func (r *Redis) Get(ctx context.Context, key string) (string, bool) {
	if doc, ok := r.local.Get(ctx, key); ok {
		return doc, true
	}
	if r.outage.Skip() {
		return "", false
	}
	ctx, cancel := redisContext(ctx)
	defer cancel()
	doc, err := r.client.Get(ctx, KeyPrefix+key).Result()
	if !r.answered(err) || err != nil {
		return "", false
	}
	if Hash(doc) != key {
		// Not written by this service (Redis may be shared): a client
		// never runs a text other than the one it named.
		return "", false
	}
	r.local.Add(ctx, key, doc)
	return doc, true
}

// redisContext bounds a Redis call by Timeout, detached from the
// request's own end, so that a client that goes away is not taken for an
// outage of Redis.
func redisContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), Timeout)
}

// Add keeps doc under key in the process and in Redis.
func (r *Redis) Add(ctx context.Context, key, doc string) {
	r.local.Add(ctx, key, doc)
	if r.outage.Skip() {
		return
	}
	ctx, cancel := redisContext(ctx)
	defer cancel()
	r.answered(r.client.Set(ctx, KeyPrefix+key, doc, TTL).Err())
}

// Close closes the connections to Redis.
func (r *Redis) Close() error { return r.client.Close() }

// Up reports whether the cache takes Redis for reachable.
func (r *Redis) Up() bool { return r.outage.Up() }

// answered reports whether Redis answered a call that returned err (a
// missing key, redis.Nil, is an answer) and keeps the outage up to date:
// a failure starts one, logged once, unless one is under way; an answer
// ends it, if there was one.
func (r *Redis) answered(err error) bool {
	if err != nil && !errors.Is(err, redis.Nil) {
		if r.outage.Fail() {
			r.log.Warn("persisted queries: Redis is unreachable; documents are kept in this process until it answers again", "err", err)
		}
		return false
	}
	if r.outage.Recover() {
		r.log.Info("persisted queries: Redis answers again; documents are shared")
	}
	return true
}
