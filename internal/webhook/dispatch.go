package webhook

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookdelivery"
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

// dispatchEvery is how often an idle replica looks for new events.
const dispatchEvery = 25 * time.Millisecond

// batchesInFlight bounds the dispatched batches whose first attempts a
// replica is still making: past it, the replica stops dispatching (other
// replicas take the events) until a batch is done.
const batchesInFlight = 4

// DefaultTakeover is how long after its dispatch a delivery's first
// attempt is left to the dispatching replica before the job queue makes
// it: longer than an attempt and its bookkeeping, so that the two never
// overlap while the replica lives.
const DefaultTakeover = 30 * time.Second

// attemptBudget is what a first attempt may take, the request and the
// recording of its outcome: a replica starts no first attempt later than
// takeover minus this after the dispatch.
const attemptBudget = AttemptTimeout + 5*time.Second

// Dispatch turns the events not yet dispatched into deliveries, one per
// enabled endpoint of the event's owner that wants its type, and inserts
// their jobs, in one transaction that also marks the events dispatched:
// an event is dispatched once, by one replica (the rows are locked with
// SKIP LOCKED on PostgreSQL; SQLite has one writer), and an event whose
// dispatch fails or whose replica dies stays to be dispatched again. The
// writes themselves only record their event (internal/app), so that an
// active endpoint costs a write nothing: the fan-out is done here, in
// batches. It returns how many events it dispatched.
//
// Each job is due only after the takeover delay: the dispatch loop makes
// the first attempts itself (firstAttempts) and records their outcomes
// in batches, which costs a fraction of a job per delivery; the job is
// there for a replica that dies before recording them.
func (q *Queue) Dispatch(ctx context.Context) (int, error) {
	b, err := q.dispatch(ctx)
	if err != nil {
		return 0, err
	}
	return b.events, nil
}

// batch is what one dispatch made: the deliveries whose first attempt is
// due, with what the attempt needs.
type batch struct {
	events int
	// more says that events were left for the next dispatch.
	more       bool
	committed  time.Time
	deliveries []firstAttempt
}

// firstAttempt is one delivery of a batch and its takeover job.
type firstAttempt struct {
	id          int
	job         int64
	url, secret string
	payload     []byte
	// The outcome, once attempted.
	tried bool
	code  int
	err   error
}

func (q *Queue) dispatch(ctx context.Context) (*batch, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return nil, err
	}
	defer t.Rollback()
	lock := ""
	if t.Dialect == dialect.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	rows, err := t.SQL.QueryContext(sys, fmt.Sprintf(`SELECT %s, %s, %s, %s FROM %s WHERE %s IS NULL ORDER BY %s LIMIT %d%s`,
		event.FieldID, event.FieldOwnerID, event.FieldType, event.FieldPayload, event.Table, event.FieldDispatchedAt, event.FieldID, dispatchBatch, lock))
	if err != nil {
		return nil, fmt.Errorf("dispatch: %w", err)
	}
	var evs []*ent.Event
	owners := map[int]bool{}
	for rows.Next() {
		ev := &ent.Event{}
		if err := rows.Scan(&ev.ID, &ev.OwnerID, &ev.Type, &ev.Payload); err != nil {
			rows.Close()
			return nil, fmt.Errorf("dispatch: %w", err)
		}
		evs = append(evs, ev)
		owners[ev.OwnerID] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(evs) == 0 {
		return &batch{}, err
	}
	ownerIDs := make([]int, 0, len(owners))
	for o := range owners {
		ownerIDs = append(ownerIDs, o)
	}
	eps, err := t.Client.WebhookEndpoint.Query().
		Where(webhookendpoint.OwnerIDIn(ownerIDs...), webhookendpoint.Enabled(true)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("dispatch: endpoints: %w", err)
	}
	b := &batch{more: len(evs) == dispatchBatch}
	var creates []*ent.WebhookDeliveryCreate
	var ids []int
	for _, ev := range evs {
		var wants []*ent.WebhookEndpoint
		for _, ep := range eps {
			if ep.OwnerID == ev.OwnerID && (len(ep.EventTypes) == 0 || slices.Contains(ep.EventTypes, ev.Type)) {
				wants = append(wants, ep)
			}
		}
		if len(ids) > 0 && len(creates)+len(wants) > maxDeliveries {
			b.more = true
			break
		}
		ids = append(ids, ev.ID)
		for _, ep := range wants {
			creates = append(creates, t.Client.WebhookDelivery.Create().SetOwnerID(ev.OwnerID).
				SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type))
			b.deliveries = append(b.deliveries, firstAttempt{url: ep.URL, secret: ep.Secret, payload: ev.Payload})
		}
	}
	b.events = len(ids)
	due := time.Now().Add(q.takeover)
	for from := 0; from < len(creates); from += maxDeliveries {
		to := min(from+maxDeliveries, len(creates))
		ds, err := t.Client.WebhookDelivery.CreateBulk(creates[from:to]...).Save(sys)
		if err != nil {
			return nil, fmt.Errorf("dispatch: deliveries: %w", err)
		}
		params := make([]river.InsertManyParams, len(ds))
		for i, d := range ds {
			b.deliveries[from+i].id = d.ID
			params[i] = river.InsertManyParams{Args: deliverArgs{DeliveryID: d.ID}, InsertOpts: &river.InsertOpts{ScheduledAt: due}}
		}
		jobs, err := q.river.InsertManyTx(sys, t.SQL, params)
		if err != nil {
			return nil, fmt.Errorf("dispatch: jobs: %w", err)
		}
		for i, j := range jobs {
			b.deliveries[from+i].job = j.Job.ID
		}
	}
	if err := t.Client.Event.Update().Where(event.IDIn(ids...)).SetDispatchedAt(time.Now()).Exec(sys); err != nil {
		return nil, fmt.Errorf("dispatch: mark: %w", err)
	}
	if err := t.Commit(); err != nil {
		return nil, fmt.Errorf("dispatch: commit: %w", err)
	}
	b.committed = time.Now()
	return b, nil
}

// firstAttempts makes the first attempt of every delivery of b, at most
// Workers at once (shared with the other batches in flight), and records
// the outcomes together. An attempt that could not start in time (the
// takeover job might run beside it) is left to the job.
func (q *Queue) firstAttempts(ctx context.Context, b *batch) {
	var wg sync.WaitGroup
	latest := b.committed.Add(q.takeover - attemptBudget)
	for i := range b.deliveries {
		acquired := false
		select {
		case q.sending <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if !acquired || time.Now().After(latest) {
			if acquired {
				<-q.sending
			}
			break
		}
		wg.Add(1)
		go func(a *firstAttempt) {
			defer func() { <-q.sending; wg.Done() }()
			start := time.Now()
			// An attempt under way when the queue stops is finished (it
			// is bounded by AttemptTimeout), not cut short.
			a.code, a.err = q.send(context.WithoutCancel(ctx), a.url, a.secret, MessageID(a.id), a.payload)
			a.tried = true
			q.metrics.latency(time.Since(start))
		}(&b.deliveries[i])
	}
	wg.Wait()
	if err := q.recordFirst(ctx, b.deliveries); err != nil && ctx.Err() == nil {
		q.log.Warn("webhook: recording first attempts failed; their jobs will make them again", "err", err)
	}
}

// recordFirst records the outcomes of first attempts in one transaction:
// a delivery that succeeded loses its takeover job; one that failed has
// it replaced by its first retry, due after the schedule's first wait. A
// takeover job already running (its replica was too slow) is left alone,
// and so is its delivery.
func (q *Queue) recordFirst(ctx context.Context, as []firstAttempt) error {
	byJob := map[int64]*firstAttempt{}
	var jobs []int64
	for i := range as {
		if as[i].tried {
			byJob[as[i].job] = &as[i]
			jobs = append(jobs, as[i].job)
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	sys := privacy.DecisionContext(context.WithoutCancel(ctx), privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return err
	}
	defer t.Rollback()
	var deleted []*rivertype.JobRow
	for from := 0; from < len(jobs); from += maxDeliveries {
		chunk := jobs[from:min(from+maxDeliveries, len(jobs))]
		res, err := q.river.JobDeleteManyTx(sys, t.SQL, river.NewJobDeleteManyParams().IDs(chunk...).First(len(chunk)))
		if err != nil {
			return fmt.Errorf("takeover jobs: %w", err)
		}
		deleted = append(deleted, res.Jobs...)
	}
	// The outcomes, grouped so that one UPDATE records every delivery
	// with the same outcome (usually one or two statements a batch).
	type outcome struct {
		code int
		err  string
	}
	groups := map[outcome][]int{}
	var retries []river.InsertManyParams
	now := time.Now()
	next := now.Add(q.wait(1))
	for _, j := range deleted {
		a := byJob[j.ID]
		o := outcome{code: a.code}
		if a.err != nil {
			o.err = a.err.Error()
			retries = append(retries, river.InsertManyParams{
				Args:       deliverArgs{DeliveryID: a.id, Tried: 1},
				InsertOpts: &river.InsertOpts{ScheduledAt: next, MaxAttempts: len(q.schedule)},
			})
		}
		groups[o] = append(groups[o], a.id)
	}
	for o, ids := range groups {
		up := t.Client.WebhookDelivery.Update().
			Where(webhookdelivery.IDIn(ids...), webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING), webhookdelivery.Attempts(0)).
			SetAttempts(1)
		if o.code != 0 {
			up.SetLastStatusCode(o.code)
		}
		if o.err == "" {
			up.SetStatus(webhookdelivery.StatusSUCCEEDED).SetDeliveredAt(now)
		} else {
			up.SetLastError(o.err).SetNextAttemptAt(next)
		}
		if err := up.Exec(sys); err != nil {
			return fmt.Errorf("outcomes: %w", err)
		}
	}
	if len(retries) > 0 {
		if _, err := q.river.InsertManyTx(sys, t.SQL, retries); err != nil {
			return fmt.Errorf("retries: %w", err)
		}
	}
	if err := t.Commit(); err != nil {
		return err
	}
	for o, ids := range groups {
		for range ids {
			if o.err == "" {
				q.metrics.outcome("succeeded")
			} else {
				q.metrics.outcome("retried")
			}
		}
	}
	return nil
}

// dispatchLoop dispatches until ctx is done: at once again after a full
// batch, every dispatchEvery otherwise, each batch's first attempts made
// beside the next dispatch; every depthEvery it also counts the pending
// deliveries (webhook_queue_depth). It returns once the batches in
// flight are done.
func (q *Queue) dispatchLoop(ctx context.Context) {
	var counted time.Time
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	slots := make(chan struct{}, batchesInFlight)
	for {
		if time.Since(counted) >= depthEvery {
			q.countDepth(ctx)
			counted = time.Now()
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		b, err := q.dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			q.log.Warn("webhook dispatch failed; the events stay to be dispatched", "err", err)
		}
		if err != nil || len(b.deliveries) == 0 {
			<-slots
		} else {
			inFlight.Add(1)
			go func() {
				defer func() { <-slots; inFlight.Done() }()
				q.firstAttempts(ctx, b)
			}()
		}
		if err == nil && b.more {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(dispatchEvery):
		}
	}
}
