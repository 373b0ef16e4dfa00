package webhook

import (
	"context"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/riverqueue/river"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/predicate"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/idempotency"
)

// Retention says how long the data that has served its purpose is kept
// (issue 42): the leader removes what is older every Every (a periodic
// job of River's, so one replica at a time), in batches of RetainBatch
// rows, each a statement of its own, so that no write waits long on a
// removal's locks.
type Retention struct {
	// Events is how long an event is kept once every delivery of it is
	// gone (EVENT_RETENTION): a pending delivery, or one kept for the
	// deliveries API, keeps its event, whose payload a redelivery sends.
	Events time.Duration
	// Deliveries is how long a delivery that has ended (SUCCEEDED or
	// FAILED) is kept (WEBHOOK_DELIVERY_RETENTION): the deliveries API
	// reaches that far back. A pending one is kept until it ends.
	Deliveries time.Duration
	// Every is how often the leader removes (RETENTION_EVERY).
	Every time.Duration
	// Jobs is how long River keeps a finished job (JOB_RETENTION): every
	// dispatch and delivery leaves a completed one, every delivery that
	// ends FAILED a discarded one, so this bounds River's table under
	// writes. River's cleaner (on the leader, every 30 s while the queue
	// runs) removes them; discarded and cancelled ones stay at least two
	// SettleEvery periods, for the settle job that reads them. The
	// deliveries table, not River's, is the record of what was sent.
	Jobs time.Duration
}

// DefaultRetention is the retention of a configuration that names none:
// thirty days of events and deliveries, removed hourly, and an hour of
// River's completed jobs (kept for inspection, not River's default day).
var DefaultRetention = Retention{Events: 30 * 24 * time.Hour, Deliveries: 30 * 24 * time.Hour, Every: time.Hour, Jobs: time.Hour}

// RetainBatch is how many rows one statement of the retention removes.
const RetainBatch = 1000

// retainTimeout bounds one run of the retention job; what it leaves is
// removed by the next.
const retainTimeout = 5 * time.Minute

// retainArgs is the periodic job of the retention.
type retainArgs struct{}

// Kind names the job in River's table.
func (retainArgs) Kind() string { return "retention" }

// retainJob is the periodic job, every every (and once when a replica
// becomes the leader).
func retainJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		return retainArgs{}, &river.InsertOpts{MaxAttempts: 1}
	}, &river.PeriodicJobOpts{ID: "retention", RunOnStart: true})
}

// retainWorker runs Retain.
type retainWorker struct {
	river.WorkerDefaults[retainArgs]
	q *Queue
}

// Timeout lets a run outlast a delivery's bound: it removes a backlog in
// many short statements.
func (w *retainWorker) Timeout(*river.Job[retainArgs]) time.Duration { return retainTimeout }

// Work removes what the retention allows.
func (w *retainWorker) Work(ctx context.Context, _ *river.Job[retainArgs]) error {
	_, err := w.q.Retain(ctx, time.Now())
	return err
}

// Removed counts the rows one retention run removed, by table, and the
// indexes of River's job table it rebuilt (rebuild.go).
type Removed struct{ Deliveries, Events, Keys, Indexes int }

// Retain removes, as of now, the deliveries that ended before the
// deliveries' retention, then the events older than theirs that no
// delivery names, then the expired idempotency keys, RetainBatch rows a
// statement, and counts them (retention_removed_total); then it rebuilds
// the indexes of River's job table that outgrew it (rebuildJobIndexes).
func (q *Queue) Retain(ctx context.Context, now time.Time) (Removed, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	var r Removed
	var err error
	r.Deliveries, err = retainTable(sys, deliveriesTable(q.client), now.Add(-q.retention.Deliveries))
	q.metrics.removed.WithLabelValues("webhook_deliveries").Add(float64(r.Deliveries))
	if err != nil {
		return r, fmt.Errorf("retention: deliveries: %w", err)
	}
	r.Events, err = retainTable(sys, eventsTable(q.client), now.Add(-q.retention.Events))
	q.metrics.removed.WithLabelValues("events").Add(float64(r.Events))
	if err != nil {
		return r, fmt.Errorf("retention: events: %w", err)
	}
	for {
		n, err := idempotency.Expire(sys, q.client, now, RetainBatch)
		r.Keys += n
		q.metrics.removed.WithLabelValues("idempotency_keys").Add(float64(n))
		if err != nil {
			return r, fmt.Errorf("retention: idempotency keys: %w", err)
		}
		if n < RetainBatch {
			break
		}
	}
	if r != (Removed{}) {
		q.log.Info("retention removed old rows", "deliveries", r.Deliveries, "events", r.Events, "idempotency_keys", r.Keys)
	}
	rebuilt, err := q.rebuildJobIndexes(ctx)
	r.Indexes = len(rebuilt)
	if err != nil {
		return r, fmt.Errorf("retention: job queue indexes: %w", err)
	}
	return r, nil
}

// undelivered holds for an event that no delivery names.
func undelivered() predicate.Event {
	return func(s *entsql.Selector) {
		d := entsql.Table(webhookdelivery.Table)
		s.Where(entsql.NotExists(entsql.Select(d.C(webhookdelivery.FieldID)).From(d).
			Where(entsql.ColumnsEQ(d.C(webhookdelivery.FieldEventID), s.C(event.FieldID)))))
	}
}

// table is what retainTable needs of a table whose ids grow with its
// rows' creation: its oldest rows after an id, and the removal of those
// of some ids that may go.
type table struct {
	oldest func(ctx context.Context, after, n int) ([]stamp, error)
	remove func(ctx context.Context, ids []int) (int, error)
}

// stamp is a row's id and creation time.
type stamp struct {
	ID        int       `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// deliveriesTable is the table of the deliveries: those that ended may go.
func deliveriesTable(c *ent.Client) table {
	return table{
		oldest: func(ctx context.Context, after, n int) (s []stamp, err error) {
			err = c.WebhookDelivery.Query().Where(webhookdelivery.IDGT(after)).Order(webhookdelivery.ByID()).Limit(n).
				Select(webhookdelivery.FieldID, webhookdelivery.FieldCreatedAt).Scan(ctx, &s)
			return s, err
		},
		remove: func(ctx context.Context, ids []int) (int, error) {
			return c.WebhookDelivery.Delete().Where(webhookdelivery.IDIn(ids...),
				webhookdelivery.StatusNEQ(webhookdelivery.StatusPENDING)).Exec(ctx)
		},
	}
}

// eventsTable is the table of the events: those dispatched that no
// delivery names may go.
func eventsTable(c *ent.Client) table {
	return table{
		oldest: func(ctx context.Context, after, n int) (s []stamp, err error) {
			err = c.Event.Query().Where(event.IDGT(after)).Order(event.ByID()).Limit(n).
				Select(event.FieldID, event.FieldCreatedAt).Scan(ctx, &s)
			return s, err
		},
		remove: func(ctx context.Context, ids []int) (int, error) {
			return c.Event.Delete().Where(event.IDIn(ids...), event.DispatchedAtNotNil(), undelivered()).Exec(ctx)
		},
	}
}

// retainTable removes the rows of t created before cutoff that may go,
// walking t by id (ids grow with time, so the walk stops at the first row
// newer than cutoff, and needs no index of its own): a batch of
// RetainBatch rows is read, then those of them that may go are removed in
// one statement of their own.
func retainTable(ctx context.Context, t table, cutoff time.Time) (int, error) {
	removed, after := 0, 0
	for {
		rows, err := t.oldest(ctx, after, RetainBatch)
		if err != nil || len(rows) == 0 {
			return removed, err
		}
		ids := make([]int, 0, len(rows))
		for _, r := range rows {
			if !r.CreatedAt.Before(cutoff) {
				break
			}
			ids = append(ids, r.ID)
		}
		if len(ids) > 0 {
			n, err := t.remove(ctx, ids)
			removed += n
			if err != nil {
				return removed, err
			}
		}
		if len(ids) < len(rows) || len(rows) < RetainBatch || ctx.Err() != nil {
			return removed, ctx.Err()
		}
		after = ids[len(ids)-1]
	}
}
