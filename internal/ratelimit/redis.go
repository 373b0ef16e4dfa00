package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Redis is the Limiter whose budgets live in Redis, so that every replica
// behind a load balancer charges the same budget of a token. It keeps the
// same state as Memory, how far each key's bucket is from full, and
// changes it with one Lua script that Redis runs atomically:
// a Take, Refund or Charge is one round trip (EVALSHA), and replicas
// never race on a key. The time is Redis's own (TIME), so the replicas'
// clocks need not agree. An idle key expires when its bucket is full.
//
// When Redis cannot be reached the limiter fails open: its calls return
// an error (the Meter then lets the request through uncharged), a warning
// is logged when it goes away and at most once per LogEvery while it stays
// away, and after a failure only one call per ProbeEvery tries Redis
// again (the others fail at once), so an outage adds no latency to every
// request. The first call that succeeds ends the outage (and says so in
// the log). Stats counts what passed unmetered.
type Redis struct {
	client *redis.Client
	limit  int
	// interval is the microseconds one unit takes to refill, the same
	// as Memory's in nanoseconds; the arguments are formatted once.
	interval          float64
	limitArg, intvArg string
	prefix            string
	// now, when set (tests), is the clock the script uses instead of
	// Redis's.
	now func() time.Time
	log *slog.Logger
	// probeEvery is how often a call tries Redis while it is down;
	// logEvery how often the outage is logged again.
	probeEvery, logEvery time.Duration

	down      atomic.Bool
	retryAt   atomic.Int64 // Unix ns: when the next call may try a Redis that is down
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
	// KeyPrefix starts the Redis key of every budget.
	KeyPrefix = "catalogue:ratelimit:"
)

// ErrUnavailable is the error of a call made while Redis is unreachable
// and that did not try it (ProbeEvery).
var ErrUnavailable = errors.New("rate limiter: Redis is unreachable")

// epoch is subtracted from Redis's clock (Unix seconds) so that times in
// microseconds stay well inside the integers a double holds exactly.
const epoch = 1_700_000_000

// script applies one operation to a key's bucket: Memory's arithmetic, in
// microseconds. KEYS[1] holds "T U": at time T (whole microseconds after
// epoch) the bucket was U microseconds from full (its used budget, a
// fraction of a microsecond kept). Keeping the time whole and the used
// budget small keeps the doubles exact to far below a nanosecond, which
// is what Memory counts in; comparisons allow a nanosecond for rounding.
// ARGV: op (take, refund, charge), n, interval (µs per unit), limit, now
// (µs after epoch; empty: Redis's clock). It answers {allowed, remaining,
// reset µs, retry after µs}.
var script = redis.NewScript(`
local op, n = ARGV[1], tonumber(ARGV[2])
local interval, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
local now
if ARGV[5] == '' then
  local t = redis.call('TIME')
  now = (tonumber(t[1]) - ` + strconv.Itoa(epoch) + `) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[5])
end
local burst = interval * limit
local used = 0
local v = redis.call('GET', KEYS[1])
if v then
  local t, u = string.match(v, '^(%d+) (%S+)$')
  if t then used = math.max(tonumber(u) - (now - tonumber(t)), 0) end
end
local allowed, retry = 1, 0
if op == 'take' then
  if n > limit then n = limit end
  local nxt = used + n * interval
  if nxt > burst + 0.001 then
    allowed, retry = 0, nxt - burst
  else
    used = nxt
  end
elseif op == 'refund' then
  used = math.max(used - n * interval, 0)
else
  used = used + n * interval
end
if allowed == 1 then
  if used > 0.001 then
    redis.call('SET', KEYS[1], string.format('%d %.17g', now, used), 'PX', math.ceil(used / 1000) + 1000)
  else
    redis.call('DEL', KEYS[1])
  end
end
local remaining = math.floor((burst - used) / interval + 0.000001)
if remaining < 0 then remaining = 0 end
return {allowed, remaining, math.floor(used + 0.5), math.floor(retry + 0.5)}
`)

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
		// url.Error repeats the URL, password and all.
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		if *d == 0 {
			*d = 500 * time.Millisecond
		}
	}
	if o.PoolTimeout == 0 {
		o.PoolTimeout = time.Second
	}
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
	quietRedisLog()
	interval := float64(int64(Window)/int64(limit)) / 1e3
	return &Redis{
		client:     redis.NewClient(opts),
		limit:      limit,
		interval:   interval,
		limitArg:   strconv.Itoa(limit),
		intvArg:    strconv.FormatFloat(interval, 'g', -1, 64),
		prefix:     KeyPrefix,
		log:        log,
		probeEvery: ProbeEvery,
		logEvery:   LogEvery,
	}
}

// Take implements Limiter.
func (r *Redis) Take(ctx context.Context, key string, n int) (Status, error) {
	return r.run(ctx, "take", key, n)
}

// Refund implements Limiter.
func (r *Redis) Refund(ctx context.Context, key string, n int) (Status, error) {
	return r.run(ctx, "refund", key, n)
}

// Charge implements Limiter.
func (r *Redis) Charge(ctx context.Context, key string, n int) (Status, error) {
	return r.run(ctx, "charge", key, n)
}

// run runs the script once for op, unless Redis is down and it is not
// this call's turn to try it.
func (r *Redis) run(ctx context.Context, op, key string, n int) (Status, error) {
	if r.skip() {
		r.failed(op, ErrUnavailable)
		return Status{}, ErrUnavailable
	}
	now := ""
	if r.now != nil {
		now = strconv.FormatInt(r.now().UnixMicro()-epoch*1e6, 10)
	}
	res, err := script.Run(ctx, r.client, []string{r.prefix + key}, op, n, r.intvArg, r.limitArg, now).Int64Slice()
	if err != nil {
		if ctx.Err() != nil {
			return Status{}, err // the request went away, not Redis
		}
		r.failed(op, err)
		return Status{}, err
	}
	if len(res) != 4 {
		return Status{}, fmt.Errorf("rate limiter: the script answered %v", res)
	}
	r.succeeded()
	return Status{
		Allowed:    res[0] == 1,
		Limit:      r.limit,
		Remaining:  int(res[1]),
		Reset:      time.Duration(res[2]) * time.Microsecond,
		RetryAfter: time.Duration(res[3]) * time.Microsecond,
	}, nil
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
	// Take failed.
	Unmetered uint64
	// Failures counts every call that failed or was not tried (takes,
	// refunds, charges, pings).
	Failures uint64
}

// Stats returns the limiter's counts, for the metrics.
func (r *Redis) Stats() RedisStats {
	return RedisStats{Up: !r.down.Load(), Unmetered: r.unmetered.Load(), Failures: r.failures.Load()}
}

// skip reports whether a call must fail without trying Redis: while it is
// down, one call per probeEvery tries it.
func (r *Redis) skip() bool {
	if !r.down.Load() {
		return false
	}
	at, now := r.retryAt.Load(), time.Now().UnixNano()
	return now < at || !r.retryAt.CompareAndSwap(at, now+int64(r.probeEvery))
}

// failed counts a failed call and logs the outage when it starts, then at
// most once per logEvery.
func (r *Redis) failed(op string, err error) {
	r.failures.Add(1)
	if op == "take" {
		r.unmetered.Add(1)
	}
	now := time.Now().UnixNano()
	if !r.down.Swap(true) {
		r.retryAt.Store(now + int64(r.probeEvery))
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
	if r.down.Load() && r.down.Swap(false) {
		r.log.Info("rate limiter: Redis answers again; requests are metered", "unmetered", r.unmetered.Load())
	}
}

var quietOnce sync.Once

// quietRedisLog sends go-redis's own log lines (a failed dial, a pool
// event) to slog at debug level: the limiter logs outages itself, once.
func quietRedisLog() {
	quietOnce.Do(func() { redis.SetLogger(debugLog{}) })
}

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
