package webhook_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/internal/app"
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
