package webhook

import (
	"context"
	"fmt"
	"slices"
	"time"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookendpoint"
	"github.com/configurator/catalogue/internal/database"
)

// dispatchBatch is how many events one dispatch turns into deliveries.
const dispatchBatch = 500

// dispatchEvery is how often an idle replica looks for new events.
const dispatchEvery = 25 * time.Millisecond

// Dispatch turns the events not yet dispatched into deliveries, one per
// enabled endpoint of the event's owner that wants its type, and inserts
// their jobs, in one transaction that also marks the events dispatched:
// an event is dispatched once, by one replica (the rows are locked with
// SKIP LOCKED on PostgreSQL; SQLite has one writer), and an event whose
// dispatch fails or whose replica dies stays to be dispatched again. The
// writes themselves only record their event (internal/app), so that an
// active endpoint costs a write nothing: the fan-out is done here, in
// batches. It returns how many events it dispatched.
func (q *Queue) Dispatch(ctx context.Context) (int, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return 0, err
	}
	defer t.Rollback()
	lock := ""
	if t.Dialect == dialect.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	rows, err := t.SQL.QueryContext(sys, fmt.Sprintf(`SELECT %s, %s, %s FROM %s WHERE %s IS NULL ORDER BY %s LIMIT %d%s`,
		event.FieldID, event.FieldOwnerID, event.FieldType, event.Table, event.FieldDispatchedAt, event.FieldID, dispatchBatch, lock))
	if err != nil {
		return 0, fmt.Errorf("dispatch: %w", err)
	}
	var evs []*ent.Event
	owners := map[int]bool{}
	for rows.Next() {
		ev := &ent.Event{}
		if err := rows.Scan(&ev.ID, &ev.OwnerID, &ev.Type); err != nil {
			rows.Close()
			return 0, fmt.Errorf("dispatch: %w", err)
		}
		evs = append(evs, ev)
		owners[ev.OwnerID] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(evs) == 0 {
		return 0, err
	}
	ownerIDs := make([]int, 0, len(owners))
	for o := range owners {
		ownerIDs = append(ownerIDs, o)
	}
	eps, err := t.Client.WebhookEndpoint.Query().
		Where(webhookendpoint.OwnerIDIn(ownerIDs...), webhookendpoint.Enabled(true)).All(sys)
	if err != nil {
		return 0, fmt.Errorf("dispatch: endpoints: %w", err)
	}
	var creates []*ent.WebhookDeliveryCreate
	ids := make([]int, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
		for _, ep := range eps {
			if ep.OwnerID == ev.OwnerID && (len(ep.EventTypes) == 0 || slices.Contains(ep.EventTypes, ev.Type)) {
				creates = append(creates, t.Client.WebhookDelivery.Create().SetOwnerID(ev.OwnerID).
					SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type))
			}
		}
	}
	if len(creates) > 0 {
		ds, err := t.Client.WebhookDelivery.CreateBulk(creates...).Save(sys)
		if err != nil {
			return 0, fmt.Errorf("dispatch: deliveries: %w", err)
		}
		jobs := make([]int, len(ds))
		for i, d := range ds {
			jobs[i] = d.ID
		}
		if err := q.Enqueue(sys, t.SQL, jobs...); err != nil {
			return 0, fmt.Errorf("dispatch: jobs: %w", err)
		}
	}
	if err := t.Client.Event.Update().Where(event.IDIn(ids...)).SetDispatchedAt(time.Now()).Exec(sys); err != nil {
		return 0, fmt.Errorf("dispatch: mark: %w", err)
	}
	if err := t.Commit(); err != nil {
		return 0, fmt.Errorf("dispatch: commit: %w", err)
	}
	return len(evs), nil
}

// dispatchLoop dispatches until ctx is done: at once again after a full
// batch, every dispatchEvery otherwise; every depthEvery it also counts
// the pending deliveries (webhook_queue_depth).
func (q *Queue) dispatchLoop(ctx context.Context) {
	var counted time.Time
	for {
		if time.Since(counted) >= depthEvery {
			q.countDepth(ctx)
			counted = time.Now()
		}
		n, err := q.Dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			q.log.Warn("webhook dispatch failed; the events stay to be dispatched", "err", err)
		}
		if n == dispatchBatch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(dispatchEvery):
		}
	}
}
