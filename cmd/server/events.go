package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	ops "github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/webhook"
	"github.com/configurator/catalogue/rest"
)

// eventParts carry the events of writes: the hub of this process's
// subscriptions, the notifier that feeds the hubs (PostgreSQL
// LISTEN/NOTIFY across replicas, in process on SQLite) and the webhook
// queue. newRouter makes them; start runs their background work.
type eventParts struct {
	hub    *events.Hub
	notify events.Notifier
	queue  *webhook.Queue
	guard  *webhook.Guard
	pg     *events.Postgres
	// queueErr is why the webhook queue could not be made: start returns
	// it, so that a server whose webhooks would never be sent does not
	// start.
	queueErr error
	// maxEndpoints is WEBHOOK_MAX_ENDPOINTS.
	maxEndpoints int
}

// newEvents makes the event parts of c's database; nothing runs yet.
func newEvents(c *ent.Client, cfg *config.Config, m *metrics.Metrics, log *slog.Logger) *eventParts {
	dropped := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "subscriptions_dropped_total",
		Help: "GraphQL subscriptions ended because their client fell too far behind.",
	})
	m.Registry().MustRegister(dropped)
	p := &eventParts{hub: events.NewHub(dropped.Inc), guard: &webhook.Guard{AllowPrivate: cfg.WebhookAllowPrivate},
		maxEndpoints: int(cfg.WebhookMaxEndpoints)}
	m.Registry().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "subscriptions_active",
		Help: "GraphQL subscriptions open on this replica.",
	}, func() float64 { return float64(p.hub.Len()) }))
	p.notify = events.Local{Hub: p.hub}
	if database.Dialect(c) == dialect.Postgres {
		p.pg = events.NewPostgres(database.Pool(c), log)
		p.notify = p.pg
	}
	if db := database.Pool(c); db != nil {
		q, err := webhook.NewQueue(c, db, database.Dialect(c), webhook.Config{
			Guard: p.guard, Schedule: cfg.WebhookSchedule(), Log: log, Metrics: m.Registry(), Retention: cfg.Retention(),
			ListenURL: cfg.DatabaseURL,
		})
		p.queue, p.queueErr = q, err
	}
	return p
}

// options are the resolver's options of the events.
func (p *eventParts) options() []graph.Option {
	return []graph.Option{
		graph.WithEvents(ops.Events{Shape: rest.EventData, Queue: p.queue, Notify: p.notify, Guard: p.guard,
			MaxEndpoints: p.maxEndpoints}),
		graph.WithHub(p.hub),
	}
}

// start runs the webhook queue and, on PostgreSQL, the sender of
// notifications, until stop, and has lis hear the events. A queue that cannot be
// made or started is an error, which stops the server from starting: the
// events of its writes would be recorded and never sent. The queue lets
// the attempts in flight finish for up to AttemptTimeout; one cut short
// is retried by another replica or at the next start (River rescues it).
// The sender sends what waits before stop returns.
func (p *eventParts) start(ctx context.Context, lis *pglisten.Listener, log *slog.Logger) (stop func(), err error) {
	if p.queueErr != nil {
		return nil, fmt.Errorf("the webhook queue cannot start: %w", p.queueErr)
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var sender sync.WaitGroup
	if p.pg != nil {
		events.Listen(lis, p.hub)
		sender.Go(func() { p.pg.Run(lctx) })
	}
	if p.queue != nil {
		if err := p.queue.Start(lctx); err != nil {
			cancel()
			return nil, fmt.Errorf("the webhook queue cannot start: %w", err)
		}
	}
	return func() {
		if p.queue != nil {
			sctx, done := context.WithTimeout(context.Background(), webhook.AttemptTimeout+time.Second)
			defer done()
			if err := p.queue.Stop(sctx); err != nil {
				log.Warn("webhook queue stopped with attempts in flight; they are retried", "err", err)
			}
		}
		cancel()
		sender.Wait()
	}, nil
}
