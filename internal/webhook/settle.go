package webhook

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"github.com/riverqueue/river"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/database"
)

// A job's last attempt can vanish: River discards a job whose last
// attempt failed, and its rescuer discards one whose replica died during
// its last attempt, without running anything of ours. A delivery job on
// its last attempt whose send was cut short, or whose outcome could not
// be recorded (the database failed, the replica stopped), and a batch job
// after its last run, would leave their deliveries PENDING with no job to
// take them further. Every such delivery is named by a discarded (or
// cancelled) job of River's, which River keeps for Retention.Jobs and
// at least two SettleEvery periods (queue.go); the leader looks for them
// every SettleEvery (a periodic job of River's, which
// another comes after if one is lost) and settles them.

// settleArgs is the periodic job that settles the deliveries whose job
// River gave up on.
type settleArgs struct{}

// Kind names the job in River's table.
func (settleArgs) Kind() string { return "webhook_settle" }

// settleJob is the periodic job, every every (and once when a replica
// becomes the leader).
func settleJob(every time.Duration) *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(every), func() (river.JobArgs, *river.InsertOpts) {
		// One run: the next period's job does what a failed one did not.
		return settleArgs{}, &river.InsertOpts{MaxAttempts: 1}
	}, &river.PeriodicJobOpts{ID: "webhook_settle", RunOnStart: true})
}

// settleWorker runs Settle.
type settleWorker struct {
	river.WorkerDefaults[settleArgs]
	q *Queue
}

// Work settles what it finds.
func (w *settleWorker) Work(ctx context.Context, _ *river.Job[settleArgs]) error {
	_, err := w.q.Settle(ctx)
	return err
}

// settleBatch bounds the deliveries one look settles; the next look
// takes the rest.
const settleBatch = 500

// lostError is the last_error of a delivery settled FAILED because the
// outcome of its last attempt was lost.
const lostError = "the outcome of the last attempt was not recorded (its replica stopped, or the database failed, during it); redeliver to send it again"

// Settle settles the pending deliveries that only discarded or cancelled
// jobs name (no live job does), in one transaction, and returns how many:
// one that a delivery job named had its attempts (that job was on its
// last, or River would have retried it) and is FAILED, saying so; one
// that only a batch job named was never attempted and is handed to a job
// of its own, due now, for the whole schedule (a receiver may see its
// webhook-id twice if a lost run did reach it, and drops the repeat). It
// reads no more than settleBatch of them.
func (q *Queue) Settle(ctx context.Context) (int, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	t, err := database.Begin(sys, q.client)
	if err != nil {
		return 0, fmt.Errorf("webhook settle: %w", err)
	}
	defer t.Rollback()
	failed, again, jobs, err := q.lost(sys, t)
	if err != nil {
		return 0, err
	}
	if len(failed)+len(again) == 0 {
		return 0, nil
	}
	if len(failed) > 0 {
		err := t.Client.WebhookDelivery.Update().
			Where(webhookdelivery.IDIn(failed...), webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING)).
			SetStatus(webhookdelivery.StatusFAILED).SetLastError(lostError).ClearNextAttemptAt().Exec(sys)
		if err != nil {
			return 0, fmt.Errorf("webhook settle: fail: %w", err)
		}
	}
	if len(again) > 0 {
		err := t.Client.WebhookDelivery.Update().
			Where(webhookdelivery.IDIn(again...), webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING)).
			SetNextAttemptAt(time.Now()).Exec(sys)
		if err != nil {
			return 0, fmt.Errorf("webhook settle: hand on: %w", err)
		}
		if _, err := q.river.InsertManyTx(sys, t.SQL, jobs); err != nil {
			return 0, fmt.Errorf("webhook settle: jobs: %w", err)
		}
	}
	if err := t.Commit(); err != nil {
		return 0, fmt.Errorf("webhook settle: commit: %w", err)
	}
	for range failed {
		q.metrics.outcome("failed")
	}
	q.log.Warn("webhook: deliveries whose job River gave up on were settled", "failed", len(failed), "handed_on", len(again))
	return len(failed) + len(again), nil
}

// lost reads the pending deliveries no live job stands behind and sorts
// them: those with no attempt left (or whose batch job named them) fail,
// the others are handed on to a new job with the attempts they have left.
func (q *Queue) lost(sys context.Context, t *database.Tx) (failed, again []int, jobs []river.InsertManyParams, err error) {
	rows, err := t.SQL.QueryContext(sys, lostSQL(t.Dialect))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("webhook settle: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, owner, attempts, single int
		if err := rows.Scan(&id, &owner, &attempts, &single); err != nil {
			return nil, nil, nil, fmt.Errorf("webhook settle: %w", err)
		}
		if single == 1 || attempts > len(q.schedule) {
			failed = append(failed, id)
			continue
		}
		again = append(again, id)
		jobs = append(jobs, river.InsertManyParams{
			Args:       deliverArgs{DeliveryID: id, Owner: owner, Tried: attempts},
			InsertOpts: &river.InsertOpts{MaxAttempts: len(q.schedule) + 1 - attempts},
		})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("webhook settle: %w", err)
	}
	return failed, again, jobs, nil
}

// lostSQL reads the pending deliveries that discarded or cancelled jobs
// name and no live job does: id, owner, attempts and 1 when a delivery
// job named it. The jobs' arguments are read as River stores them (jsonb
// on PostgreSQL, JSONB blobs on SQLite); the live jobs are the few that
// wait or run, the discarded ones those kept (River's cleaner removes
// them after Retention.Jobs, two SettleEvery periods at least).
func lostSQL(dialectName string) string {
	const (
		gone = `'discarded', 'cancelled'`
		live = `'available', 'pending', 'retryable', 'running', 'scheduled'`
	)
	one, each := `(j.args->>'delivery_id')::bigint`, `CROSS JOIN LATERAL jsonb_array_elements_text(j.args->'deliveries') AS e(value)`
	member := `e.value::bigint`
	if dialectName == dialect.SQLite {
		one, each, member = `json_extract(j.args, '$.delivery_id')`, `, json_each(j.args, '$.deliveries') AS e`, `e.value`
	}
	named := func(states string) string {
		return fmt.Sprintf(`SELECT %[1]s AS id, 1 AS single FROM river_job j WHERE j.state IN (%[3]s) AND j.kind = 'webhook_delivery'
  UNION ALL
  SELECT %[2]s, 0 FROM river_job j %[4]s WHERE j.state IN (%[3]s) AND j.kind = 'webhook_batch'`, one, member, states, each)
	}
	return fmt.Sprintf(`WITH lost AS (%[1]s), live AS (%[2]s)
SELECT d.%[3]s, d.%[4]s, d.%[5]s, max(l.single) FROM %[6]s d JOIN lost l ON l.id = d.%[3]s
WHERE d.%[7]s = 'PENDING' AND d.%[3]s NOT IN (SELECT id FROM live WHERE id IS NOT NULL)
GROUP BY d.%[3]s, d.%[4]s, d.%[5]s ORDER BY d.%[3]s LIMIT %[8]d`,
		named(gone), named(live), webhookdelivery.FieldID, webhookdelivery.FieldOwnerID, webhookdelivery.FieldAttempts,
		webhookdelivery.Table, webhookdelivery.FieldStatus, settleBatch)
}
