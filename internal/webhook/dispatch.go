package webhook

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookendpoint"
	"github.com/configurator/catalogue/internal/database"
)

// dispatchBatch is how many events one dispatch turns into deliveries.
const dispatchBatch = 500

// maxDeliveries bounds the deliveries of one dispatch: the events past
// it wait for the next one (which follows at once), so that an owner
// with many endpoints makes several modest transactions rather than one
// whose statements outgrow the database's limits (PostgreSQL takes at
// most 65,535 parameters a statement). An event is never split: one
// with more endpoints than this is dispatched alone, its deliveries
// inserted in chunks.
const maxDeliveries = 1000

// DispatchFallback is how often an idle replica looks for new events
// without being woken (Wake): the events of a replica that stopped between
// a write's commit and its dispatch are dispatched within it. A write's
// commit wakes the dispatch of its own replica (internal/app, on both
// databases), which alone dispatches it: waking every replica (through
// the events' NOTIFY) would only have them race for the same rows, so an
// idle replica makes no dispatch in between.
const DispatchFallback = 30 * time.Second

// setAsideAfter is how many dispatches of an event alone may fail before
// the event is set aside (marked dispatched without deliveries, logged
// and counted): the others are not held back meanwhile.
const setAsideAfter = 5

// retryAlone is the wait before an event whose dispatch failed alone is
// tried again, growing fourfold with each failure (0.1 s, 0.4 s, 1.6 s,
// 6.4 s: set aside some 8 s after its first failure alone).
func retryAlone(failures int) time.Duration {
	return 100 * time.Millisecond << (2 * (failures - 1))
}

// Dispatch turns the events not yet dispatched into deliveries, one per
// enabled endpoint of the event's owner that wants its type, and inserts
// a job per batch of them (at most batchSize), in one transaction that
// also marks the events dispatched: an event is dispatched once, by one
// replica (the rows are locked with SKIP LOCKED on PostgreSQL; SQLite has
// one writer), and an event whose dispatch fails or whose replica dies
// stays to be dispatched again. The writes themselves only record their
// event (internal/app), so that an active endpoint costs a write nothing:
// the fan-out is done here, in batches, and a batch job makes the first
// attempts (batchWorker), which costs a fraction of a job per delivery.
// It returns how many events it dispatched.
func (q *Queue) Dispatch(ctx context.Context) (int, error) {
	ids, _, err := q.dispatch(ctx, selection{})
	return len(ids), err
}

// selection is what a dispatch takes: the first events not dispatched
// (none of skip), or only those of only.
type selection struct {
	only, skip []int
}

// dispatch dispatches the events sel selects and returns their ids, read
// before anything could fail (nil: the failure came first, from the
// database rather than from an event), and whether events were left for
// the next dispatch.
func (q *Queue) dispatch(ctx context.Context, sel selection) (ids []int, more bool, err error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return nil, false, err
	}
	defer t.Rollback()
	evs, err := undispatched(sys, t, sel)
	if err != nil || len(evs) == 0 {
		return nil, false, err
	}
	// From here on a failure may be an event's.
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	creates, taken, more, err := deliveriesOf(sys, t, evs)
	if err != nil {
		return ids, false, err
	}
	ids = ids[:taken]
	if err := q.insertDeliveries(sys, t, creates); err != nil {
		return ids, false, err
	}
	if err := t.Client.Event.Update().Where(event.IDIn(ids...)).SetDispatchedAt(time.Now()).Exec(sys); err != nil {
		return ids, false, fmt.Errorf("dispatch: mark: %w", err)
	}
	if err := t.Commit(); err != nil {
		return ids, false, fmt.Errorf("dispatch: commit: %w", err)
	}
	return ids, more, nil
}

// undispatched reads the first dispatchBatch events not dispatched that
// sel selects, locking them on PostgreSQL (skipping the rows another
// replica has locked), through an index scan of events_undispatched
// (indexScanOnly).
func undispatched(ctx context.Context, t *database.Tx, sel selection) ([]*ent.Event, error) {
	if t.Dialect == dialect.Postgres {
		if _, err := t.SQL.ExecContext(ctx, indexScanOnly); err != nil {
			return nil, fmt.Errorf("dispatch: %w", err)
		}
	}
	rows, err := t.SQL.QueryContext(ctx, undispatchedSQL(t.Dialect, sel))
	if err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	defer rows.Close()
	var evs []*ent.Event
	for rows.Next() {
		ev := &ent.Event{}
		if err := rows.Scan(&ev.ID, &ev.OwnerID, &ev.Type); err != nil {
			return nil, fmt.Errorf("dispatch: %w", err)
		}
		evs = append(evs, ev)
	}
	return evs, rows.Err()
}

// undispatchedSQL is the statement of undispatched on dialectName.
func undispatchedSQL(dialectName string, sel selection) string {
	lock := ""
	if dialectName == dialect.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	where := ""
	if len(sel.only) > 0 {
		where = fmt.Sprintf(" AND %s IN (%s)", event.FieldID, idList(sel.only))
	} else if len(sel.skip) > 0 {
		where = fmt.Sprintf(" AND %s NOT IN (%s)", event.FieldID, idList(sel.skip))
	}
	return fmt.Sprintf(`SELECT %s, %s, %s FROM %s WHERE %s IS NULL%s ORDER BY %s LIMIT %d%s`,
		event.FieldID, event.FieldOwnerID, event.FieldType, event.Table, event.FieldDispatchedAt, where, event.FieldID, dispatchBatch, lock)
}

// indexScanOnly rules out, for the rest of the dispatch's transaction on
// PostgreSQL, the plans that read events_undispatched without killing its
// dead entries. Every dispatched event leaves one there (its row is
// updated out of the index's predicate) until the table is vacuumed. An
// index scan marks each entry it finds dead as such, once, and skips it
// thereafter; a bitmap scan (which the planner takes while it thinks the
// table small, and keeps: the statement is prepared once per connection
// and has no parameters, so its first plan is reused) visits every dead
// entry's row again at every dispatch, 40 times a second when idle, and
// cost 27 ms a dispatch after 20,000 orders, growing with each
// (bench/RESULTS.md, sustained).
const indexScanOnly = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`

// deliveriesOf makes the deliveries of the first events of evs, one per
// enabled endpoint of the event's owner that wants its type, as many
// events as fit in maxDeliveries (at least one). It returns how many
// events they are, and whether events were left for the next dispatch.
func deliveriesOf(ctx context.Context, t *database.Tx, evs []*ent.Event) (creates []*ent.WebhookDeliveryCreate, taken int, more bool, err error) {
	var owners []int
	for _, ev := range evs {
		owners = append(owners, ev.OwnerID)
	}
	slices.Sort(owners)
	eps, err := t.Client.WebhookEndpoint.Query().
		Where(webhookendpoint.OwnerIDIn(slices.Compact(owners)...), webhookendpoint.Enabled(true)).All(ctx)
	if err != nil {
		return nil, 0, false, fmt.Errorf("dispatch: endpoints: %w", err)
	}
	for _, ev := range evs {
		var wants []*ent.WebhookEndpoint
		for _, ep := range eps {
			if ep.OwnerID == ev.OwnerID && (len(ep.EventTypes) == 0 || slices.Contains(ep.EventTypes, ev.Type)) {
				wants = append(wants, ep)
			}
		}
		if taken > 0 && len(creates)+len(wants) > maxDeliveries {
			return creates, taken, true, nil
		}
		taken++
		for _, ep := range wants {
			creates = append(creates, t.Client.WebhookDelivery.Create().SetOwnerID(ev.OwnerID).
				SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type))
		}
	}
	return creates, taken, len(evs) == dispatchBatch, nil
}

// insertDeliveries inserts creates, at most maxDeliveries a statement,
// and a batch job for each batchSize of them.
func (q *Queue) insertDeliveries(ctx context.Context, t *database.Tx, creates []*ent.WebhookDeliveryCreate) error {
	for from := 0; from < len(creates); from += maxDeliveries {
		ds, err := t.Client.WebhookDelivery.CreateBulk(creates[from:min(from+maxDeliveries, len(creates))]...).Save(ctx)
		if err != nil {
			return fmt.Errorf("dispatch: deliveries: %w", err)
		}
		var params []river.InsertManyParams
		for b := 0; b < len(ds); b += batchSize {
			args := batchArgs{}
			for _, d := range ds[b:min(b+batchSize, len(ds))] {
				args.Deliveries = append(args.Deliveries, d.ID)
			}
			params = append(params, river.InsertManyParams{Args: args, InsertOpts: &river.InsertOpts{MaxAttempts: batchMaxAttempts}})
		}
		if _, err := q.river.InsertManyTx(ctx, t.SQL, params); err != nil {
			return fmt.Errorf("dispatch: jobs: %w", err)
		}
		// River works them once the dispatch has committed (keepRiver).
		q.want.Store(true)
	}
	return nil
}

// idList is ids as SQL, for an IN list (integers only).
func idList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// failure is an event whose dispatch failed alone: how often, and when
// to try it again.
type failure struct {
	n    int
	next time.Time
}

// dispatcher is the dispatch loop's memory of failed dispatches.
type dispatcher struct {
	q *Queue
	// suspects are the events of failed dispatches still to be tried in
	// smaller groups (halves, down to one event), last first.
	suspects [][]int
	// failing are the events whose dispatch failed alone.
	failing map[int]*failure
	// dispatched counts the events dispatched since the events table was
	// last vacuumed (vacuumEvents).
	dispatched int
}

// step makes one dispatch: a group of suspects if there are any, else an
// event whose dispatch failed alone and is due again, else the next
// events (none of the failing ones). A dispatch of several events that
// fails has its events tried again in halves, so that the events that
// are fine are dispatched and the bad one is found; an event whose
// dispatch fails alone setAsideAfter times is set aside. It returns
// whether events were left for the next dispatch.
func (d *dispatcher) step(ctx context.Context) (more bool) {
	q := d.q
	var sel selection
	alone := 0
	if n := len(d.suspects); n > 0 {
		sel.only, d.suspects = d.suspects[n-1], d.suspects[:n-1]
	} else {
		now := time.Now()
		for id, f := range d.failing {
			if !f.next.After(now) {
				sel.only, alone = []int{id}, id
				break
			}
			sel.skip = append(sel.skip, id)
		}
	}
	ids, more, err := q.dispatch(ctx, sel)
	if err == nil {
		if len(ids) > 0 {
			q.changed.Store(true)
		}
		d.dispatched += len(ids)
		for _, id := range append(ids, sel.only...) {
			delete(d.failing, id)
		}
		return more || len(d.suspects) > 0
	}
	if ctx.Err() != nil {
		return false
	}
	switch {
	case len(ids) > 1:
		q.log.Warn("webhook dispatch failed; its events are tried again in smaller groups", "events", len(ids), "err", err)
		d.suspects = append(d.suspects, ids[len(ids)/2:], ids[:len(ids)/2])
		return true
	case len(ids) == 1:
		d.failed(ctx, ids[0], err)
		return len(d.suspects) > 0
	case alone != 0:
		// The database failed before the event was read: not its fault.
		d.failing[alone].next = time.Now().Add(retryAlone(d.failing[alone].n))
	}
	q.log.Warn("webhook dispatch failed; the events stay to be dispatched", "err", err)
	return false
}

// failed counts a failed dispatch of event id alone and sets the event
// aside after setAsideAfter of them.
func (d *dispatcher) failed(ctx context.Context, id int, err error) {
	q := d.q
	f := d.failing[id]
	if f == nil {
		f = &failure{}
		d.failing[id] = f
	}
	f.n++
	f.next = time.Now().Add(retryAlone(f.n))
	if f.n < setAsideAfter {
		q.log.Warn("webhook dispatch of an event failed; it is tried again", "event_id", id, "failures", f.n, "err", err)
		return
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	n, uerr := q.client.Event.Update().Where(event.ID(id), event.DispatchedAtIsNil()).SetDispatchedAt(time.Now()).Save(sys)
	if uerr != nil {
		q.log.Warn("webhook: could not set aside an event whose dispatch keeps failing", "event_id", id, "err", uerr)
		return
	}
	delete(d.failing, id)
	if n == 1 {
		q.log.Error("webhook: event set aside, no webhook is sent for it: its dispatch failed", "event_id", id, "failures", f.n, "err", err)
		q.metrics.aside.Inc()
	}
}

// dispatchLoop dispatches until ctx is done: at once again after a full
// batch, when woken (Wake), and every fallback otherwise; after a
// dispatch or an outcome it counts the pending deliveries
// (webhook_queue_depth), at most every depthEvery, and after every
// vacuumAfter events it dispatched it vacuums the events table. It starts
// River when there are jobs to work and, every fallback, reviews whether
// River should run (keep.go).
func (q *Queue) dispatchLoop(ctx context.Context) {
	var counted time.Time
	reviewed := time.Now()
	d := &dispatcher{q: q, failing: map[int]*failure{}}
	for {
		if q.changed.Load() && time.Since(counted) >= depthEvery {
			q.changed.Store(false)
			q.countDepth(ctx)
			counted = time.Now()
		}
		if d.dispatched >= q.vacuumAfter {
			q.vacuumEvents(ctx)
			d.dispatched = 0
		}
		more := d.step(ctx)
		if time.Since(reviewed) >= q.fallback {
			q.review(ctx)
			reviewed = time.Now()
		}
		q.keepRiver(ctx)
		if more {
			continue
		}
		wait := q.fallback - time.Since(reviewed)
		if q.changed.Load() || len(d.failing) > 0 {
			// A count is owed, or a failed event is due again soon.
			wait = min(wait, depthEvery, retryAlone(1))
		}
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-time.After(wait):
		}
	}
}

// Wake has the dispatch look for new events now (and start River if it
// was asked to, Enqueued); it never waits. The commit of every write that
// records an event calls it.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// DefaultVacuumAfter is Config.VacuumAfter's default: at a thousand
// orders a second, a vacuum every 5 s.
const DefaultVacuumAfter = 5000

// vacuumEvents reclaims, on PostgreSQL, the entries dispatched events
// left in events_undispatched and their rows' old versions, whether or
// not the server runs autovacuum (it is off on many test servers, and
// with it on a large table waits for a fifth of its rows to be dead).
// Without it every dispatch walks the entries of every event dispatched
// since the table was last vacuumed, a cost that grows with each order
// (indexScanOnly). INDEX_CLEANUP ON: by default VACUUM leaves the indexes
// alone when few pages have dead rows, which is always the case here. It
// skips a table another replica is vacuuming and never truncates it
// (truncation takes a lock that writers would queue behind). A failure
// is logged; the next vacuum comes after as many events again.
func (q *Queue) vacuumEvents(ctx context.Context) {
	if q.dialect != dialect.Postgres {
		return
	}
	if _, err := q.db.ExecContext(ctx, "VACUUM (SKIP_LOCKED, TRUNCATE false, INDEX_CLEANUP ON) "+event.Table); err != nil && ctx.Err() == nil {
		q.log.Warn("could not vacuum the events table", "err", err)
	}
}
