package webhook

import (
	"context"
	"time"

	"github.com/configurator/catalogue/internal/database"
)

// River runs on a replica only while it has work (issue 42: an idle
// replica does no work). A running River client makes a statement every
// few seconds whatever its queue holds (its leader election and its
// scheduler every 5 s, its rescuer, cleaner and producer reports every
// 30 s, settings it has no option for), about 0.6 transactions a second on
// the leader. So the dispatch loop starts it (startRiver) when this
// replica has inserted jobs (a dispatch, a redelivery), when a review
// finds jobs any replica left to do (a retry due later, a job whose
// replica died, one whose notification was missed), and when the
// retention is due; and it stops it (a review, every fallback) once no
// job is left to do and none was for SettleEvery, so that the settling of
// a delivery whose last job River gave up on has run (it runs as River
// starts on the leader, and every SettleEvery). The leader is elected
// among the replicas whose River runs; one that stops resigns. River's
// maintenance (its cleaner of finished jobs among it) starts on the
// leader one service after the other, each after a random pause of up to
// a second, so up to 7 s after River: SettleEvery (a minute) outlasts it.

// liveJobs is whether River's table holds a job still to do, by any
// replica: due, waiting for its time (a retry, a snoozed job), or running.
const liveJobs = `SELECT count(*) FROM (SELECT 1 FROM river_job WHERE state IN ('available', 'pending', 'retryable', 'scheduled', 'running') LIMIT 1) AS live`

// startRiver starts this replica's River client if it is not running.
func (q *Queue) startRiver(ctx context.Context) error {
	if q.working.Load() {
		return nil
	}
	if err := q.river.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	q.working.Store(true)
	q.riverStarted, q.lastLive = time.Now(), time.Now()
	return nil
}

// stopRiver stops this replica's River client (it resigns its leadership);
// a failure is logged and it is tried again at the next review.
func (q *Queue) stopRiver(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := q.river.Stop(sctx); err != nil {
		q.log.Warn("could not stop the job queue of an idle replica; tried again later", "err", err)
		return
	}
	q.working.Store(false)
}

// review starts River when there are jobs to do (any replica's) or the
// retention is due, and stops it when there were none for settleEvery
// (it always runs for settleEvery once started). One statement.
func (q *Queue) review(ctx context.Context) {
	var live int
	if err := database.Pool(q.client).QueryRowContext(ctx, liveJobs).Scan(&live); err != nil {
		if ctx.Err() == nil {
			q.log.Warn("could not look for webhook jobs; looking again later", "err", err)
		}
		return
	}
	now := time.Now()
	if live > 0 {
		q.lastLive = now
	}
	if !q.working.Load() {
		if live > 0 || now.Sub(q.riverStarted) >= q.retention.Every {
			q.want.Store(true)
		}
		return
	}
	if now.Sub(q.lastLive) > q.settleEvery {
		q.stopRiver(ctx)
	}
}

// keepRiver starts River when a dispatch, a redelivery or a review asked
// for it; a failure (the database away) is logged and the next review
// asks again.
func (q *Queue) keepRiver(ctx context.Context) {
	if !q.want.Swap(false) {
		return
	}
	if err := q.startRiver(ctx); err != nil && ctx.Err() == nil {
		q.log.Warn("could not start the job queue; tried again at the next review", "err", err)
	}
}

// Enqueued has River work the jobs a committed transaction inserted
// (Enqueue): the commit of a redelivery calls it.
func (q *Queue) Enqueued() {
	q.want.Store(true)
	q.Wake()
}
