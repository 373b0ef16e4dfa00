package webhook_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/webhook"
)

// TestRetain: one run of the retention removes the deliveries that ended
// before their retention, the dispatched events older than theirs that
// no delivery names any more, and the expired idempotency keys, counts
// them in retention_removed_total, and removes nothing else: a delivery
// still retrying (however old) keeps its event, a delivery inside its
// retention keeps its event, an event not yet dispatched stays, and a key
// inside its TTL still replays.
func TestRetain(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		reg := prometheus.NewRegistry()
		q := queueWith(t, c, webhook.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: reg,
			Retention: webhook.Retention{Events: 10 * 24 * time.Hour, Deliveries: 30 * 24 * time.Hour}})
		a := dbtest.NewTenant(t, c, "A")
		ep := dbtest.Must(c.WebhookEndpoint.Create().SetOwnerID(a.ID).SetURL("https://example.com/hook").
			SetSecret(webhook.NewSecret()).Save(dbtest.Sys))
		now := time.Now()
		day := 24 * time.Hour
		ev := func(age time.Duration, dispatched bool) *ent.Event {
			cr := c.Event.Create().SetOwnerID(a.ID).SetType("order.created").SetPayload([]byte(`{}`)).
				SetResourceID(1).SetCreatedAt(now.Add(-age))
			if dispatched {
				cr.SetDispatchedAt(now.Add(-age))
			}
			return dbtest.Must(cr.Save(dbtest.Sys))
		}
		del := func(e *ent.Event, age time.Duration, status webhookdelivery.Status) *ent.WebhookDelivery {
			return dbtest.Must(c.WebhookDelivery.Create().SetOwnerID(a.ID).SetEndpointID(ep.ID).SetEventID(e.ID).
				SetEventType(e.Type).SetStatus(status).SetCreatedAt(now.Add(-age)).Save(dbtest.Sys))
		}
		gone := ev(40*day, true)                                      // its delivery goes, then it does
		goneDel := del(gone, 31*day, webhookdelivery.StatusSUCCEEDED) // ended, past 30 days
		bare := ev(11*day, true)                                      // no delivery at all, past 10 days
		retrying := ev(40*day, true)
		retryingDel := del(retrying, 31*day, webhookdelivery.StatusPENDING) // still retrying: stays, keeps its event
		kept := ev(40*day, true)
		keptDel := del(kept, 29*day, webhookdelivery.StatusFAILED) // inside 30 days: stays, keeps its event
		undispatched := ev(40*day, false)
		// More old events than a batch: the walk goes on past a full one.
		for range webhook.RetainBatch {
			ev(20*day, true)
		}
		young := ev(9*day, true) // ids grow with time: the walk stops here
		key := func(name string, expires time.Time) {
			dbtest.Must(c.IdempotencyKey.Create().SetOwnerID(a.ID).SetKey(name).SetFingerprint("fp").SetOrderID(42).
				SetCreatedAt(expires.Add(-idempotency.TTL)).SetExpiresAt(expires).Save(dbtest.Sys))
		}
		key("expired", now.Add(-time.Minute))
		key("live", now.Add(time.Hour))

		r, err := q.Retain(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := (webhook.Removed{Deliveries: 1, Events: 2 + webhook.RetainBatch, Keys: 1}); r != want {
			t.Errorf("Retain = %+v; want %+v", r, want)
		}
		var events []int
		for _, e := range c.Event.Query().AllX(dbtest.Sys) {
			events = append(events, e.ID)
		}
		if want := []int{retrying.ID, kept.ID, undispatched.ID, young.ID}; !slices.Equal(events, want) {
			t.Errorf("events left %v; want %v (gone %d, bare %d)", events[:min(len(events), 10)], want, gone.ID, bare.ID)
		}
		var dels []int
		for _, d := range c.WebhookDelivery.Query().AllX(dbtest.Sys) {
			dels = append(dels, d.ID)
		}
		if want := []int{retryingDel.ID, keptDel.ID}; !slices.Equal(dels, want) {
			t.Errorf("deliveries left %v; want %v (gone %d)", dels, want, goneDel.ID)
		}
		if id, err := idempotency.Replay(ctx, c, a.ID, "live", "fp"); id != 42 || err != nil {
			t.Errorf("Replay of a key inside its TTL = %d, %v; want 42", id, err)
		}
		if n := c.IdempotencyKey.Query().CountX(dbtest.Sys); n != 1 {
			t.Errorf("%d idempotency keys left; want 1 (the live one)", n)
		}
		for table, want := range map[string]float64{"events": 2 + webhook.RetainBatch, "webhook_deliveries": 1, "idempotency_keys": 1} {
			if got := labelled(t, reg, "retention_removed_total", "table", table); got != want {
				t.Errorf("retention_removed_total{table=%q} = %v; want %v", table, got, want)
			}
		}
		// A second run finds nothing more.
		if r, err := q.Retain(ctx, now); r != (webhook.Removed{}) || err != nil {
			t.Errorf("second Retain = %+v, %v; want nothing removed", r, err)
		}
	})
}

// labelled reads the counter name{label=value} from reg.
func labelled(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
