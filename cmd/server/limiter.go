package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/metrics"
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
	opts, err := ratelimit.RedisOptions(cfg.RedisURL)
	if err != nil {
		// Validate has read the URL already.
		panic(err)
	}
	r := ratelimit.NewRedis(opts, int(cfg.RateLimit), log)
	m.Registry().MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "ratelimit_redis_up",
			Help: "1 while the rate limiter's Redis answers, 0 while requests pass unmetered because it does not.",
		}, func() float64 {
			if r.Stats().Up {
				return 1
			}
			return 0
		}),
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
