package webhook

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/database"
)

// batchSize bounds the deliveries of one batch job: a dispatch of more
// makes several, which other replicas can take.
const batchSize = 100

// startWithin is how long after it began a batch job starts first
// attempts: the deliveries it has not started by then (a slow receiver
// took the time) are handed to a job each, so that the batch ends well
// before River's rescuer would take it for dead.
const startWithin = AttemptTimeout

// batchTimeout bounds a batch job: its attempts start within startWithin,
// each takes at most AttemptTimeout, and the recording a few seconds. It
// is below the queue's RescueStuckJobsAfter (3 × AttemptTimeout), so that
// a live replica's batch is not rescued.
const batchTimeout = startWithin + AttemptTimeout + 5*time.Second

// batchMaxAttempts is how often River runs a batch job: a run after the
// first hands the batch's deliveries to a job each (a transaction of a
// few statements), so the later runs are only for a database that keeps
// failing.
const batchMaxAttempts = 25

// batchArgs is the job of a dispatched batch: the first attempts of its
// deliveries.
type batchArgs struct {
	Deliveries []int `json:"deliveries"`
	// Owner, when set, makes it the batch of one owner's deliveries that
	// another batch deferred to the owner's turn (fair.deferral).
	Owner int `json:"owner,omitempty"`
}

// Kind names the job in River's table.
func (batchArgs) Kind() string { return "webhook_batch" }

// batchWorker makes the first attempts of a batch.
type batchWorker struct {
	river.WorkerDefaults[batchArgs]
	q *Queue
}

// Timeout is batchTimeout: the worker bounds its own attempts.
func (w *batchWorker) Timeout(*river.Job[batchArgs]) time.Duration { return batchTimeout }

// NextRetry runs a batch whose run failed again after a second, then
// after up to a minute: the next run only hands the deliveries on.
func (w *batchWorker) NextRetry(job *river.Job[batchArgs]) time.Time {
	return time.Now().Add(min(time.Duration(job.Attempt*job.Attempt)*time.Second, time.Minute))
}

// errTakenOver is a batch run whose job River gave to another run (it
// rescued it as stuck): its outcomes are not recorded, the other run's
// are.
var errTakenOver = errors.New("webhook batch: River gave this job to another run; the outcomes of this one are not recorded")

// Work makes the first attempt of every delivery of the batch that still
// waits for it, at most Workers at once (shared with the other batches),
// and records the outcomes, the retries of the failed ones and the
// job's completion in one transaction (river.JobCompleteTx): either all
// of it commits or none, and the job runs again. A run after the first
// (the first failed to record, or its replica died and River rescued the
// job) does not attempt: the first run's attempts may have reached their
// receivers unrecorded, so it hands each delivery still waiting to a job
// of its own (the receiver may see a webhook-id twice and drops the
// repeat).
//
// The deliveries of an owner whose share of the replica's sending stays
// in use (its endpoints are slow) are deferred: handed, in the same
// transaction, to a batch of that owner's due at its booked turn, which
// is snoozed (put back without an attempt) while the owner still has no
// turn when it comes up. So a batch never waits long on one owner, and
// its other owners' attempts start at once.
func (w *batchWorker) Work(ctx context.Context, job *river.Job[batchArgs]) error {
	q := w.q
	p := pickFirst
	if owner := job.Args.Owner; owner != 0 {
		if job.Attempt == 1 && !q.fair.turn(owner) {
			return river.JobSnooze(q.fair.deferral(owner, len(job.Args.Deliveries)))
		}
		p = pickDeferred
	}
	ds, err := q.load(ctx, job.Args.Deliveries, p)
	if err != nil {
		return fmt.Errorf("webhook batch: %w", err)
	}
	as := make([]firstAttempt, len(ds))
	for i, d := range ds {
		as[i].delivery = d
	}
	if job.Attempt == 1 {
		q.attemptAll(ctx, as, time.Now().Add(startWithin))
	}
	return q.recordBatch(ctx, job, as, p)
}

// firstAttempt is one delivery of a batch, what its attempt needs and,
// once made, its outcome.
type firstAttempt struct {
	delivery
	tried bool
	// deferred is a delivery whose owner had no turn: it goes to a batch
	// of the owner's, due at its booked turn.
	deferred bool
	code     int
	err      error
}

// attemptAll sends the deliveries of as whose endpoint is enabled, each
// owner's in order and the owners side by side, as the replica's sending
// and each owner's share of it allow (fair); it starts none after
// startBy or once the queue stops (those are handed on), defers an
// owner's deliveries that have no turn, and waits for the attempts it
// started.
func (q *Queue) attemptAll(ctx context.Context, as []firstAttempt, startBy time.Time) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-q.stopping:
			cancel()
		case <-actx.Done():
		}
	}()
	byOwner := map[int][]*firstAttempt{}
	var owners []int
	for i := range as {
		a := &as[i]
		if !a.enabled {
			continue
		}
		if byOwner[a.owner] == nil {
			owners = append(owners, a.owner)
		}
		byOwner[a.owner] = append(byOwner[a.owner], a)
	}
	var sending sync.WaitGroup
	var owning sync.WaitGroup
	for _, owner := range owners {
		owning.Go(func() {
			mine := byOwner[owner]
			for i, a := range mine {
				slot := q.fair.acquire(actx, owner, startBy)
				if slot == nil {
					if actx.Err() == nil && time.Now().Before(startBy) {
						for _, rest := range mine[i:] {
							rest.deferred = true
						}
					}
					return
				}
				sending.Go(func() {
					defer slot.release()
					// An attempt under way when the job's context ends is
					// finished (it is bounded by AttemptTimeout) and recorded.
					a.code, a.err = q.send(context.WithoutCancel(ctx), a.url, a.secret, MessageID(a.id), a.payload)
					a.tried = true
				})
			}
		})
	}
	owning.Wait()
	sending.Wait()
}

// recordBatch records the outcomes of as, hands the deliveries not
// attempted to a job each, and completes job, in one transaction. It
// refuses (errTakenOver, the transaction rolled back) when the job is no
// longer this run's: River rescued it and another run has it or had it.
func (q *Queue) recordBatch(ctx context.Context, job *river.Job[batchArgs], as []firstAttempt, p pick) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	sys := privacy.DecisionContext(rctx, privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return fmt.Errorf("webhook batch: %w", err)
	}
	defer t.Rollback()
	now := time.Now()
	next := now.Add(q.wait(1))
	groups, handed, deferred, jobs := q.sortOutcomes(as, now, next)
	if err := writeOutcomes(sys, t, p, groups, handed, deferred, now, next); err != nil {
		return err
	}
	if len(jobs) > 0 {
		if _, err := q.river.InsertManyTx(sys, t.SQL, jobs); err != nil {
			return fmt.Errorf("webhook batch: jobs: %w", err)
		}
	}
	// JobCompleteTx completes the job if it is running, whichever run has
	// it, and returns it as it is otherwise: only this run's attempt,
	// completed here, may commit.
	done, err := river.JobCompleteTx[riverdriver.Driver[*sql.Tx]](sys, t.SQL, job)
	if err != nil {
		return fmt.Errorf("webhook batch: complete: %w", err)
	}
	if done.State != rivertype.JobStateCompleted || done.Attempt != job.Attempt {
		return errTakenOver
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("webhook batch: commit: %w", err)
	}
	for o, ids := range groups {
		for range ids {
			q.metrics.outcome(o.metric())
		}
	}
	return nil
}

// outcome is what one UPDATE records of attempts: a batch groups the
// outcomes of its first attempts so that every delivery with the same is
// recorded at once (usually one or two statements a batch).
type outcome struct {
	code   int
	err    string
	failed bool // no attempt left: the endpoint is disabled or the schedule spent
}

// apply sets on up what o records: the status code, and a success
// (delivered at now), a failure with no attempt left, or a failed
// attempt retried at next.
func (o outcome) apply(up *ent.WebhookDeliveryUpdate, now, next time.Time) *ent.WebhookDeliveryUpdate {
	if o.code != 0 {
		up.SetLastStatusCode(o.code)
	}
	switch {
	case o.failed:
		return up.SetStatus(webhookdelivery.StatusFAILED).SetLastError(o.err).ClearNextAttemptAt()
	case o.err == "":
		return up.SetStatus(webhookdelivery.StatusSUCCEEDED).SetDeliveredAt(now).ClearNextAttemptAt().ClearLastError()
	}
	return up.SetLastError(o.err).SetNextAttemptAt(next)
}

// metric is the outcome's label of webhook_deliveries_total.
func (o outcome) metric() string {
	switch {
	case o.failed:
		return "failed"
	case o.err == "":
		return "succeeded"
	}
	return "retried"
}

// sortOutcomes groups the deliveries of as by outcome, lists the ones not
// attempted (handed on) and those deferred (by the time they are due),
// and makes their jobs (a batch per owner for the deferred ones, due at
// its booked turn) and those of the retries, due at next.
func (q *Queue) sortOutcomes(as []firstAttempt, now, next time.Time) (groups map[outcome][]int, handed []int, deferred map[time.Time][]int, jobs []river.InsertManyParams) {
	groups = map[outcome][]int{}
	deferred = map[time.Time][]int{}
	byOwner := map[int][]int{}
	var owners []int
	for _, a := range as {
		switch {
		case !a.enabled:
			o := outcome{err: "the endpoint is disabled", failed: true}
			groups[o] = append(groups[o], a.id)
		case a.deferred:
			if byOwner[a.owner] == nil {
				owners = append(owners, a.owner)
			}
			byOwner[a.owner] = append(byOwner[a.owner], a.id)
		case !a.tried:
			handed = append(handed, a.id)
			jobs = append(jobs, river.InsertManyParams{Args: deliverArgs{DeliveryID: a.id, Owner: a.owner}})
		case a.err == nil:
			groups[outcome{code: a.code}] = append(groups[outcome{code: a.code}], a.id)
		default:
			o := outcome{code: a.code, err: a.err.Error()}
			groups[o] = append(groups[o], a.id)
			jobs = append(jobs, river.InsertManyParams{
				Args:       deliverArgs{DeliveryID: a.id, Tried: 1, Owner: a.owner},
				InsertOpts: &river.InsertOpts{ScheduledAt: next, MaxAttempts: len(q.schedule)},
			})
		}
	}
	for _, owner := range owners {
		ids := byOwner[owner]
		due := now.Add(q.fair.deferral(owner, len(ids)))
		deferred[due] = append(deferred[due], ids...)
		jobs = append(jobs, river.InsertManyParams{
			Args:       batchArgs{Deliveries: ids, Owner: owner},
			InsertOpts: &river.InsertOpts{ScheduledAt: due, MaxAttempts: batchMaxAttempts},
		})
	}
	return groups, handed, deferred, jobs
}

// writeOutcomes records the outcomes of groups, marks the deliveries
// handed on due now (the marker keeps a later run of the job from handing
// them on again) and the deferred ones due when their owner's batch is,
// on the deliveries that p picks (those still waiting for their first
// attempt).
func writeOutcomes(ctx context.Context, t *database.Tx, p pick, groups map[outcome][]int, handed []int, deferred map[time.Time][]int, now, next time.Time) error {
	waiting := func(ids []int) *ent.WebhookDeliveryUpdate {
		u := t.Client.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...),
			webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING), webhookdelivery.Attempts(0))
		if p == pickFirst {
			u.Where(webhookdelivery.NextAttemptAtIsNil())
		}
		return u
	}
	for o, ids := range groups {
		if err := o.apply(waiting(ids).SetAttempts(1), now, next).Exec(ctx); err != nil {
			return fmt.Errorf("webhook batch: outcomes: %w", err)
		}
	}
	if len(handed) > 0 {
		if err := waiting(handed).SetNextAttemptAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("webhook batch: hand on: %w", err)
		}
	}
	for due, ids := range deferred {
		if err := waiting(ids).SetNextAttemptAt(due).Exec(ctx); err != nil {
			return fmt.Errorf("webhook batch: defer: %w", err)
		}
	}
	return nil
}
