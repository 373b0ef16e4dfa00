package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Redis is the Limiter whose budgets live in Redis, so that every replica
// behind a load balancer charges the same budget of a token: an Allow is
// go-redis/redis_rate's AllowN, the generic cell rate algorithm in one Lua
// script that Redis runs atomically (one round trip, no race between
// replicas) on Redis's own clock, so the replicas' clocks need not agree.
// A key expires when its bucket is full.
//
// When Redis cannot be reached the limiter fails open: its calls return
// an error (the Meter then lets the request through uncharged), a warning
// is logged when it goes away and at most once per LogEvery while it stays
// away, and after a failure only one call per ProbeEvery tries Redis
// again (the others fail at once), so an outage adds no latency to every
// request. The first call that succeeds ends the outage (and says so in
// the log). Stats counts what passed unmetered.
type Redis struct {
	client  *redis.Client
	limiter *redis_rate.Limiter
	limit   int
	rate    redis_rate.Limit
	prefix  string
	log     *slog.Logger
	outage  Outage
	// logEvery is how often the outage is logged again.
	logEvery time.Duration

	loggedAt  atomic.Int64 // Unix ns: when the outage was last logged
	unmetered atomic.Uint64
	failures  atomic.Uint64
}

// Defaults of the Redis limiter's behaviour during an outage.
const (
	// ProbeEvery is how often, while Redis is unreachable, one call tries
	// it again; the others fail at once.
	ProbeEvery = time.Second
	// LogEvery is how often an outage is logged again while it lasts.
	LogEvery = 30 * time.Second
	// KeyPrefix starts the key of every budget, after redis_rate's own
	// "rate:".
	KeyPrefix = "catalogue:ratelimit:"
)

// ErrUnavailable is the error of a call made while Redis is unreachable
// and that did not try it (ProbeEvery).
var ErrUnavailable = errors.New("rate limiter: Redis is unreachable")

// RedisOptions reads a REDIS_URL (redis://[USER:PASSWORD@]HOST[:PORT][/DB],
// rediss:// for TLS, unix://PATH) into go-redis's options, with the
// limiter's defaults where the URL names none: short timeouts (500 ms to
// connect, read and write) and no retries, since a request waits for the
// limiter and a failed call only lets it through; RESP2 (RESP3's push
// notifications serve nothing here) and no library identification, so a
// new connection costs no extra round trips. The URL's own parameters
// (dial_timeout, read_timeout, max_retries, pool_size, ...) win.
func RedisOptions(rawURL string) (*redis.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's *url.Error repeats the URL, password and all; its
		// cause does not.
		return nil, fmt.Errorf("not a URL: %v", errors.Unwrap(err))
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		*d = cmp.Or(*d, 500*time.Millisecond)
	}
	o.PoolTimeout = cmp.Or(o.PoolTimeout, time.Second)
	if !q.Has("max_retries") {
		o.MaxRetries = -1
	}
	if !q.Has("protocol") {
		o.Protocol = 2
	}
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return o, nil
}

// NewRedis returns a limiter of limit units per Window for every key, kept
// in the Redis that opts names (RedisOptions). It does not connect: the
// first call does, and a Redis that is down at start is an outage like
// any other.
func NewRedis(opts *redis.Options, limit int, log *slog.Logger) *Redis {
	QuietRedisLog()
	client := redis.NewClient(opts)
	return &Redis{
		client:   client,
		limiter:  redis_rate.NewLimiter(client),
		limit:    limit,
		rate:     redis_rate.Limit{Rate: limit, Burst: limit, Period: Window},
		prefix:   KeyPrefix,
		log:      log,
		outage:   Outage{ProbeEvery: ProbeEvery},
		logEvery: LogEvery,
	}
}

// Allow implements Limiter, unless Redis is down and it is not this
// call's turn to try it.
func (r *Redis) Allow(ctx context.Context, key string, n int) (Status, error) {
	if r.outage.Skip() {
		r.failed("allow", ErrUnavailable)
		return Status{}, ErrUnavailable
	}
	res, err := r.limiter.AllowN(ctx, r.prefix+key, r.rate, min(n, r.limit))
	if err != nil {
		if ctx.Err() != nil {
			return Status{}, err // the request went away, not Redis
		}
		r.failed("allow", err)
		return Status{}, err
	}
	r.succeeded()
	s := Status{Allowed: res.Allowed > 0, Limit: r.limit, Remaining: res.Remaining, Reset: max(0, res.ResetAfter)}
	if !s.Allowed {
		// redis_rate answers a refusal with no remaining units; what is
		// left is what the bucket's reset says.
		s.RetryAfter = res.RetryAfter
		s.Remaining = int((Window - s.Reset) / (Window / time.Duration(r.limit)))
	}
	return s, nil
}

// Ping asks Redis whether it answers, for the readiness check; like any
// call it ends an outage when it succeeds, and starts one when it fails.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		if ctx.Err() == nil {
			r.failed("ping", err)
		}
		return err
	}
	r.succeeded()
	return nil
}

// Close closes the connections to Redis.
func (r *Redis) Close() error { return r.client.Close() }

// RedisStats is what the limiter counted since it started.
type RedisStats struct {
	// Up is false while the limiter takes Redis for unreachable.
	Up bool
	// Unmetered counts the requests let through uncharged because a
	// call to Redis failed.
	Unmetered uint64
	// Failures counts every call that failed or was not tried (allows and
	// pings).
	Failures uint64
}

// Stats returns the limiter's counts, for the metrics.
func (r *Redis) Stats() RedisStats {
	return RedisStats{Up: r.outage.Up(), Unmetered: r.unmetered.Load(), Failures: r.failures.Load()}
}

// failed counts a failed call and logs the outage when it starts, then at
// most once per logEvery.
func (r *Redis) failed(op string, err error) {
	r.failures.Add(1)
	if op == "allow" {
		r.unmetered.Add(1)
	}
	now := time.Now().UnixNano()
	if r.outage.Fail() {
		r.loggedAt.Store(now)
		r.log.Warn("rate limiter: Redis is unreachable; requests pass unmetered until it answers again", "err", err)
		return
	}
	if last := r.loggedAt.Load(); now-last >= int64(r.logEvery) && r.loggedAt.CompareAndSwap(last, now) {
		r.log.Warn("rate limiter: Redis is still unreachable; requests pass unmetered", "err", err, "unmetered", r.unmetered.Load())
	}
}

// succeeded ends an outage, if there was one.
func (r *Redis) succeeded() {
	if r.outage.Recover() {
		r.log.Info("rate limiter: Redis answers again; requests are metered", "unmetered", r.unmetered.Load())
	}
}

var quietOnce sync.Once

// QuietRedisLog sends go-redis's own log lines (a failed dial, a pool
// event) to slog at debug level, for the whole process: the limiter and
// the other users of Redis (internal/persisted) log outages themselves,
// once, where go-redis would log every failed dial.
func QuietRedisLog() {
	quietOnce.Do(func() { redis.SetLogger(debugLog{}) })
}

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// Outage paces the calls of a user of Redis (the limiter,
// internal/persisted) while Redis is down: one call per ProbeEvery tries
// it, the others do not wait for it.
type Outage struct {
	ProbeEvery time.Duration

	down    atomic.Bool
	retryAt atomic.Int64 // Unix ns: when the next call may try a Redis that is down
}

// Skip reports whether a call must not try Redis: while it is down, one
// call per ProbeEvery tries it.
func (o *Outage) Skip() bool {
	if !o.down.Load() {
		return false
	}
	at, now := o.retryAt.Load(), time.Now().UnixNano()
	return now < at || !o.retryAt.CompareAndSwap(at, now+int64(o.ProbeEvery))
}

// Fail records a failed call; it reports whether that starts an outage.
func (o *Outage) Fail() bool {
	if o.down.Swap(true) {
		return false
	}
	o.retryAt.Store(time.Now().UnixNano() + int64(o.ProbeEvery))
	return true
}

// Recover records a call that succeeded; it reports whether that ends an outage.
func (o *Outage) Recover() bool { return o.down.Load() && o.down.Swap(false) }

// Up reports whether Redis is taken for reachable.
func (o *Outage) Up() bool { return !o.down.Load() }
