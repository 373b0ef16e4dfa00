package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/persisted"
	"github.com/configurator/catalogue/internal/ratelimit"
)

// newAPQ returns the APQ cache shared by every replica in the Redis of
// REDIS_URL, whatever the rate limits (the same Redis, its own
// connections), or nil without it: then the endpoint keeps its own in
// process. Its state goes to the metrics.
func newAPQ(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) *persisted.Redis {
	if cfg.RedisURL == "" {
		return nil
	}
	opts, err := ratelimit.RedisOptions(cfg.RedisURL)
	if err != nil {
		// Validate has read the URL already.
		panic(err)
	}
	r := persisted.NewRedis(opts, persisted.NewMemory(persisted.DefaultMemoryBytes), log)
	m.Registry().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "apq_redis_up",
		Help: "1 while the persisted queries' Redis answers, 0 while each replica keeps the documents registered with it to itself.",
	}, func() float64 {
		if r.Up() {
			return 1
		}
		return 0
	}))
	return r
}
