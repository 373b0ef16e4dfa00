package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
	"github.com/configurator/catalogue/internal/webhook"
)

// job is a row of River's table, as the tests read it.
type job struct {
	ID    int64
	Kind  string
	State string
	// DeliveryID is a delivery job's, Deliveries a batch job's.
	DeliveryID int   `json:"delivery_id"`
	Deliveries []int `json:"deliveries"`
}

// live says whether River will still run the job.
func (j job) live() bool {
	switch j.State {
	case "available", "scheduled", "retryable", "running", "pending":
		return true
	}
	return false
}

// jobs reads River's jobs on c, oldest first.
func jobs(t *testing.T, c *ent.Client) []job {
	t.Helper()
	args := "args::text"
	if database.Dialect(c) == dialect.SQLite {
		args = "json(args)"
	}
	rows, err := database.Pool(c).Query(`SELECT id, kind, state, ` + args + ` FROM river_job ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []job
	for rows.Next() {
		var j job
		var raw string
		if err := rows.Scan(&j.ID, &j.Kind, &j.State, &raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), &j); err != nil {
			t.Fatalf("job %d args %s: %v", j.ID, raw, err)
		}
		if j.Kind == "webhook_settle" { // the leader's periodic look (settle.go)
			continue
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unsettled returns the deliveries that are pending with no live job to
// take them further: a delivery must end SUCCEEDED or FAILED or have one.
func unsettled(t *testing.T, w world) []string {
	t.Helper()
	live := map[int]bool{}
	for _, j := range jobs(t, w.c) {
		if j.live() {
			live[j.DeliveryID] = true
			for _, id := range j.Deliveries {
				live[id] = true
			}
		}
	}
	var out []string
	for _, d := range w.c.WebhookDelivery.Query().AllX(w.sys) {
		if d.Status == webhookdelivery.StatusPENDING && !live[d.ID] {
			out = append(out, fmt.Sprintf("delivery %d (pending, %d attempts)", d.ID, d.Attempts))
		}
	}
	return out
}

// TestFirstAttemptsInABatchJob: the deliveries of a dispatch have their
// first attempts made by one batch job, which records them and completes
// itself; nothing is sent twice and no job is left to run.
func TestFirstAttemptsInABatchJob(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusOK)
		q := queue(t, c, time.Second)
		a := operations(c, q)
		if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			createMaterial(t, w, a, fmt.Sprintf("m%d", i))
		}
		if n, err := q.Dispatch(context.Background()); err != nil || n != 3 {
			t.Fatalf("dispatch: %d, %v; want the 3 events", n, err)
		}
		start(t, q)
		waitFor(t, "the 3 deliveries", func() bool {
			n, _ := c.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(webhookdelivery.StatusSUCCEEDED)).Count(w.sys)
			return n == 3
		})
		for _, d := range c.WebhookDelivery.Query().AllX(w.sys) {
			if d.Attempts != 1 || d.DeliveredAt == nil || d.LastStatusCode == nil || *d.LastStatusCode != http.StatusOK {
				t.Errorf("delivery %+v; want one attempt, 200, delivered", d)
			}
		}
		waitFor(t, "the batch job to complete", func() bool {
			js := jobs(t, c)
			return len(js) == 1 && js[0].State == "completed"
		})
		if js := jobs(t, c); len(js) != 1 || js[0].Kind != "webhook_batch" || len(js[0].Deliveries) != 3 {
			t.Errorf("jobs %+v; want one batch job of the 3 deliveries", js)
		}
		seen := map[string]int{}
		for _, r := range rcv.requests() {
			seen[r.id]++
		}
		if len(seen) != 3 || len(rcv.requests()) != 3 {
			t.Errorf("requests by webhook-id %v; want 3 ids once each", seen)
		}
	})
}

// TestBatchRunTakenOver reproduces the interleaving that left a delivery
// pending forever when the dispatching replica and a takeover job raced:
// a batch's first attempt is slow; River takes the job for stuck and
// gives it to another replica (as its rescuer does with a job whose
// replica died), whose run hands the delivery to a job of its own; that
// job's attempt fails and schedules a retry; then the first attempt
// succeeds. Its run must not record it over the other's (the job is no
// longer its own): the delivery stays pending with a live retry, at
// every moment, and the retry delivers it.
func TestBatchRunTakenOver(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c1, c2 := dbtest.Open(t, url), dbtest.Open(t, url)
			w := newWorld(t, c1)
			// The first request waits for release and succeeds; the
			// second fails; the others succeed.
			release := make(chan struct{})
			var mu sync.Mutex
			var ids []string
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				ids = append(ids, r.Header.Get("webhook-id"))
				n := len(ids)
				mu.Unlock()
				switch n {
				case 1:
					<-release
				case 2:
					rw.WriteHeader(http.StatusServiceUnavailable)
				}
			}))
			defer srv.Close()
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()
			requests := func() int { mu.Lock(); defer mu.Unlock(); return len(ids) }
			// Replica 1 sends one attempt at a time (its owner's share of
			// it held by the slow first attempt), so that the rescued
			// batch's delivery is sent by replica 2.
			guard := &webhook.Guard{AllowPrivate: true}
			q1 := queueWith(t, c1, webhook.Config{Guard: guard, Schedule: []time.Duration{300 * time.Millisecond}, Workers: 1})
			q2 := queueWith(t, c2, webhook.Config{Guard: guard, Schedule: []time.Duration{300 * time.Millisecond}})
			a := operations(c1, q1)
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			createMaterial(t, w, a, "Elm")
			if n, err := q1.Dispatch(context.Background()); err != nil || n != 1 {
				t.Fatalf("dispatch: %d, %v", n, err)
			}
			start(t, q1)
			waitFor(t, "the first attempt", func() bool { return requests() == 1 })
			// What River's rescuer does to a job running too long (it
			// sets it retryable, and its scheduler then available).
			res, err := database.Pool(c1).Exec(`UPDATE river_job SET state = 'available' WHERE kind = 'webhook_batch' AND state = 'running'`)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("rescuing the batch job: %d rows, %v", n, err)
			}
			start(t, q2)
			waitFor(t, "the handed-on attempt to fail", func() bool {
				d, err := c1.WebhookDelivery.Query().Only(w.sys)
				return err == nil && d.Attempts == 1 && d.NextAttemptAt != nil && d.LastError != nil
			})
			if u := unsettled(t, w); len(u) > 0 {
				t.Errorf("before the first attempt ends: %v have no live job", u)
			}
			close(release)
			waitFor(t, "the delivery to succeed", func() bool {
				return c1.WebhookDelivery.Query().OnlyX(w.sys).Status == webhookdelivery.StatusSUCCEEDED
			})
			if u := unsettled(t, w); len(u) > 0 {
				t.Errorf("%v have no live job", u)
			}
			// The first run's success was refused, not recorded: two
			// attempts (the failed one and its retry), three requests of
			// one webhook-id.
			d := c1.WebhookDelivery.Query().OnlyX(w.sys)
			if d.Attempts != 2 || d.LastStatusCode == nil || *d.LastStatusCode != http.StatusOK {
				t.Errorf("delivery %+v; want 2 recorded attempts, the last 200", d)
			}
			mu.Lock()
			got := append([]string(nil), ids...)
			mu.Unlock()
			if len(got) != 3 || got[0] != got[1] || got[1] != got[2] {
				t.Errorf("requests %v; want 3 of one webhook-id", got)
			}
			waitFor(t, "no job left to run", func() bool {
				for _, j := range jobs(t, c1) {
					if j.live() {
						return false
					}
				}
				return true
			})
		})
	}
}

// TestDispatchSetsAsideAnEvent: an event whose dispatch keeps failing (a
// trigger refuses its deliveries) holds no other back: the events beside
// it are delivered at once, and it is set aside after a few tries, with
// one log line naming it and its error, and the metric counting it.
func TestDispatchSetsAsideAnEvent(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusOK)
		logs := &testkit.SyncBuffer{}
		reg := prometheus.NewRegistry()
		q := queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Schedule: []time.Duration{time.Hour},
			Log: slog.New(slog.NewTextHandler(logs, nil)), Metrics: reg})
		a := operations(c, q)
		if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
			t.Fatal(err)
		}
		var materials []int
		for i := range 5 {
			materials = append(materials, createMaterial(t, w, a, fmt.Sprintf("m%d", i)))
		}
		bad := c.Event.Query().Where(event.ResourceID(materials[2])).OnlyX(w.sys).ID
		db := database.Pool(c)
		if database.Dialect(c) == dialect.Postgres {
			for _, s := range []string{
				`CREATE FUNCTION refuse_delivery() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
				fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON webhook_deliveries FOR EACH ROW WHEN (NEW.event_id = %d) EXECUTE FUNCTION refuse_delivery()`, bad),
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
		} else if _, err := db.Exec(fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON webhook_deliveries WHEN NEW.event_id = %d BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`, bad)); err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		start(t, q)
		waitFor(t, "the 4 other events' webhooks", func() bool { return len(rcv.requests()) == 4 })
		t.Logf("the 4 others arrived %v after the start", time.Since(started))
		if ev := c.Event.GetX(w.sys, bad); ev.DispatchedAt != nil {
			t.Errorf("the bad event was set aside before the others arrived; want them not to wait for it")
		}
		waitFor(t, "the bad event to be set aside", func() bool { return c.Event.GetX(w.sys, bad).DispatchedAt != nil })
		if n := c.WebhookDelivery.Query().Where(webhookdelivery.EventID(bad)).CountX(w.sys); n != 0 {
			t.Errorf("%d deliveries of the bad event; want none", n)
		}
		var asideLines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "set aside") {
				asideLines = append(asideLines, l)
			}
		}
		if len(asideLines) != 1 || !strings.Contains(asideLines[0], fmt.Sprintf("event_id=%d", bad)) || !strings.Contains(asideLines[0], "refused by the test") {
			t.Errorf("log lines about setting aside: %q; want one naming event %d and its error", asideLines, bad)
		}
		if n := metric(t, reg, "webhook_events_set_aside_total").GetCounter().GetValue(); n != 1 {
			t.Errorf("webhook_events_set_aside_total = %v; want 1", n)
		}
		// The events after it go through as usual.
		createMaterial(t, w, a, "after")
		waitFor(t, "the next event's webhook", func() bool { return len(rcv.requests()) == 5 })
	})
}

// metric returns the one sample of the metric name in reg (a counter's
// or a gauge's), failing the test when there is none.
func metric(t *testing.T, reg *prometheus.Registry, name string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0]
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// TestRedeliverOnce: parallel redeliveries of one failed delivery make one
// job; the others are refused as already pending.
func TestRedeliverOnce(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		q := queue(t, c, time.Hour) // never started: the jobs stay
		a := operations(c, q)
		ep, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: "http://127.0.0.1:9/hook"})
		if err != nil {
			t.Fatal(err)
		}
		createMaterial(t, w, a, "Teak")
		ev := c.Event.Query().OnlyX(w.sys)
		d := dbtest.Must(c.WebhookDelivery.Create().SetOwnerID(ev.OwnerID).SetEndpointID(ep.Endpoint.ID).SetEventID(ev.ID).
			SetEventType(ev.Type).SetStatus(webhookdelivery.StatusFAILED).SetAttempts(8).SetLastError("no answer").Save(w.sys))
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = a.RedeliverWebhook(w.ctx, d.ID)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case apperr.KindOf(err) != apperr.Conflict:
				t.Errorf("redelivery: %v; want success or a conflict", err)
			}
		}
		var mine []job
		for _, j := range jobs(t, c) {
			if j.Kind == "webhook_delivery" && j.DeliveryID == d.ID {
				mine = append(mine, j)
			}
		}
		if ok != 1 || len(mine) != 1 {
			t.Errorf("%d redeliveries succeeded, %d jobs; want one of each", ok, len(mine))
		}
		if got := c.WebhookDelivery.GetX(w.sys, d.ID); got.Status != webhookdelivery.StatusPENDING {
			t.Errorf("status %s; want PENDING", got.Status)
		}
		// A pending delivery and a missing one are refused.
		if err := a.RedeliverWebhook(w.ctx, d.ID); apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("redelivering a pending delivery: %v; want a conflict", err)
		}
		if err := a.RedeliverWebhook(w.ctx, d.ID+1000); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("redelivering a missing delivery: %v; want not found", err)
		}
	})
}
