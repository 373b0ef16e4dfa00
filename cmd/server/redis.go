package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
)

// newLimiter returns the rate limiter cfg asks for: nil when rate limiting
// is off, the Redis one when REDIS_URL is set (then also returned as
// shared, for the readiness check and the shutdown), else the in-memory
// one. The Redis limiter's state goes to the metrics.
func newLimiter(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) (lim ratelimit.Limiter, shared *ratelimit.Redis) {
	if cfg.RateLimit <= 0 {
		return nil, nil
	}
	if cfg.RedisURL == "" {
		return ratelimit.NewMemory(int(cfg.RateLimit)), nil
	}
	r := ratelimit.NewRedis(redisOptions(cfg), int(cfg.RateLimit), log)
	m.Registry().MustRegister(
		upGauge("ratelimit_redis_up",
			"1 while the rate limiter's Redis answers, 0 while requests pass unmetered because it does not.",
			func() bool { return r.Stats().Up }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ratelimit_unmetered_total",
			Help: "Requests let through without charging their token because the rate limiter's Redis was unreachable.",
		}, func() float64 { return float64(r.Stats().Unmetered) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "ratelimit_redis_failures_total",
			Help: "Calls of the rate limiter's Redis (allows and pings) that failed or were not tried during an outage.",
		}, func() float64 { return float64(r.Stats().Failures) }),
	)
	return r, r
}

// newAPQ returns the APQ cache shared by every replica in the Redis of
// REDIS_URL, whatever the rate limits (the same Redis, its own
// connections), or nil without it: then the endpoint keeps its own in
// process. Its state goes to the metrics.
func newAPQ(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) *persisted.Redis {
	if cfg.RedisURL == "" {
		return nil
	}
	r := persisted.NewRedis(redisOptions(cfg), persisted.NewMemory(persisted.DefaultMemoryBytes), log)
	m.Registry().MustRegister(upGauge("apq_redis_up",
		"1 while the persisted queries' Redis answers, 0 while each replica keeps the documents registered with it to itself.", r.Up))
	return r
}

// redisOptions are the connection options of REDIS_URL, which Validate
// has read already.
func redisOptions(cfg *config.Config) *redis.Options {
	opts, err := ratelimit.RedisOptions(cfg.RedisURL)
	if err != nil {
		panic(err)
	}
	return opts
}

// upGauge is a gauge of 1 while up holds, 0 while it does not.
func upGauge(name, help string, up func() bool) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
		if up() {
			return 1
		}
		return 0
	})
}

// limiterName describes the rate limiter for the start's log line, without
// a password.
func limiterName(cfg *config.Config) string {
	switch {
	case cfg.RateLimit <= 0:
		return "off"
	case cfg.RedisURL != "":
		return database.Redact(cfg.RedisURL)
	}
	return "memory"
}

// redisState is the readiness check's word on the limiter's Redis: "ok"
// or "unreachable" (the replica stays ready: requests pass unmetered).
func redisState(ctx context.Context, r *ratelimit.Redis) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		return "unreachable"
	}
	return "ok"
}
