package webhook_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// TestQueueRunsOnlyWithWork: a replica's job queue (River, whose loops
// query the database every few seconds) stops once it has had no job to
// do for SettleEvery (webhook_queue_working 0); a write with a webhook
// starts it again and its webhook arrives; once idle again, a job that
// another replica inserted (a redelivery there, whose queue never runs:
// as if it had died, or this replica had missed the notification) is
// found by this replica's review and delivered.
func TestQueueRunsOnlyWithWork(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c1, c2 := dbtest.Open(t, url), dbtest.Open(t, url)
			w := newWorld(t, c1)
			rcv := newReceiver(t, http.StatusOK)
			reg := prometheus.NewRegistry()
			q1 := queueWith(t, c1, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Schedule: []time.Duration{time.Second},
				Metrics: reg, DispatchFallback: 20 * time.Millisecond, SettleEvery: 20 * time.Millisecond})
			a := operations(c1, q1)
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
				t.Fatal(err)
			}
			start(t, q1)
			idle := func() bool { return metric(t, reg, "webhook_queue_working").GetGauge().GetValue() == 0 }
			waitFor(t, "the queue of an idle replica to stop", idle)
			createMaterial(t, w, a, "Oak")
			waitFor(t, "the webhook of a write to an idle replica", func() bool { return len(rcv.requests()) == 1 })
			waitFor(t, "the queue to stop again", idle)

			d := c1.WebhookDelivery.Query().OnlyX(w.sys)
			other := operations(c2, queue(t, c2, time.Second)) // never started
			if err := other.RedeliverWebhook(w.ctx, d.ID); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the redelivery another replica inserted", func() bool { return len(rcv.requests()) == 2 })
		})
	}
}

// TestFinishedJobsRemoved: River's finished jobs (every dispatch and
// delivery leaves a completed one, every delivery that ends FAILED a
// discarded one) are removed once older than Retention.Jobs
// (JOB_RETENTION), a discarded one no sooner than two SettleEvery
// periods (the settle job reads them), so that River's table too reaches
// a plateau under writes: the jobs of a first write, to a receiver that
// answers and one that fails, are gone once the queue has run again after
// their retention (a queue that runs only with work removes them once it
// has run for as long as River's cleaner takes to start).
func TestFinishedJobsRemoved(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c := dbtest.Open(t, b.URL(t))
			w := newWorld(t, c)
			ok, failing := newReceiver(t, http.StatusOK), newReceiver(t, http.StatusInternalServerError)
			reg := prometheus.NewRegistry()
			const settle = 2 * time.Second
			q := queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Schedule: []time.Duration{100 * time.Millisecond},
				// The queue stays 2 s after its work, long enough for River's
				// cleaner to start (River staggers its maintenance's start);
				// its review, every 300 ms, seldom sees the settle job (every
				// 2 s, done at once) as work.
				Metrics: reg, DispatchFallback: 300 * time.Millisecond, SettleEvery: settle,
				Retention: webhook.Retention{Jobs: time.Second}})
			a := operations(c, q)
			for _, r := range []*receiver{ok, failing} {
				if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: r.URL}); err != nil {
					t.Fatal(err)
				}
			}
			start(t, q)
			createMaterial(t, w, a, "Oak")
			finished := func() map[string][]int64 {
				rows, err := database.Pool(c).Query(`SELECT state, id FROM river_job WHERE state IN ('completed', 'discarded') AND kind IN ('webhook_delivery', 'webhook_batch') ORDER BY id`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				ids := map[string][]int64{}
				for rows.Next() {
					var state string
					var id int64
					if err := rows.Scan(&state, &id); err != nil {
						t.Fatal(err)
					}
					ids[state] = append(ids[state], id)
				}
				return ids
			}
			var first map[string][]int64
			waitFor(t, "the first write's jobs to finish, one discarded", func() bool {
				first = finished()
				return len(ok.requests()) == 1 && len(failing.requests()) == 2 && len(first["discarded"]) > 0
			})
			last := slices.Max(slices.Concat(first["completed"], first["discarded"]))
			idle := func() bool { return metric(t, reg, "webhook_queue_working").GetGauge().GetValue() == 0 }
			waitFor(t, "the queue to stop", idle)
			time.Sleep(2*settle + 100*time.Millisecond) // past the retention of both
			createMaterial(t, w, a, "Ash")
			waitFor(t, "the second webhook", func() bool { return len(ok.requests()) == 2 })
			// River's maintenance services start one after the other, each
			// after a random pause of up to a second, the cleaner among the
			// last: up to 7 s, longer than this queue's 2 s of settling
			// (a minute in production). A write every half second keeps
			// the queue working until the cleaner has run.
			writes := 0
			next := time.Now()
			waitFor(t, fmt.Sprintf("the finished jobs %v past their retention to be removed", first), func() bool {
				for _, ids := range finished() {
					if ids[0] <= last {
						if time.Now().After(next) {
							writes++
							createMaterial(t, w, a, fmt.Sprintf("Ash %d", writes))
							next = time.Now().Add(500 * time.Millisecond)
						}
						return false
					}
				}
				return true
			})
		})
	}
}
