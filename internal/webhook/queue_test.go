package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/webhook"
)

// received is one request a receiver got.
type received struct {
	id, signature string
	timestamp     int64
	body          []byte
}

// receiver is a webhook receiver on loopback that answers the statuses
// of answer in turn (the last one from then on).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer []int
}

func newReceiver(t *testing.T, answer ...int) *receiver {
	r := &receiver{answer: answer}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Get("webhook-id"), req.Header.Get("webhook-signature"), ts, body})
		status := r.answer[min(len(r.got), len(r.answer))-1]
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// world is one owner with a dashboard viewer on a database.
type world struct {
	c   *ent.Client
	ctx context.Context
	sys context.Context
}

func newWorld(t *testing.T, c *ent.Client) world {
	return world{c: c, ctx: dbtest.NewTenant(t, c, "A").Dash(1), sys: dbtest.Sys}
}

// queue is a delivery queue over c, retrying on schedule; it works jobs
// once started.
func queue(t *testing.T, c *ent.Client, schedule ...time.Duration) *webhook.Queue {
	t.Helper()
	return queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Schedule: schedule})
}

// queueWith is a delivery queue over c configured by cfg, polling every
// 20 ms for jobs; its dispatch looks for new events unwoken only every
// hour, so that the events a test waits for must wake it (Wake) as in
// production.
func queueWith(t *testing.T, c *ent.Client, cfg webhook.Config) *webhook.Queue {
	t.Helper()
	cfg.PollInterval = 20 * time.Millisecond
	if cfg.DispatchFallback == 0 {
		cfg.DispatchFallback = time.Hour
	}
	q, err := webhook.NewQueue(c, database.Pool(c), database.Dialect(c), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func start(t *testing.T, q *webhook.Queue) {
	t.Helper()
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		q.Stop(ctx)
	})
}

// operations returns the write workflows with q as their queue.
func operations(c *ent.Client, q *webhook.Queue) *app.App {
	a := app.New(c, nil, share.New(""))
	a.SetEvents(app.Events{Queue: q, Guard: &webhook.Guard{AllowPrivate: true}})
	return a
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func createMaterial(t *testing.T, w world, a *app.App, name string) int {
	t.Helper()
	id, err := a.CreateMaterial(w.ctx, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestDeliveryRetriesKeepTheID: a receiver that fails first gets the
// event again after the schedule's wait, with the same webhook-id and a
// valid signature each time; the delivery then reads SUCCEEDED after two
// attempts.
func TestDeliveryRetriesKeepTheID(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusInternalServerError, http.StatusNoContent)
		q := queue(t, c, 50*time.Millisecond)
		a := operations(c, q)
		ep, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL + "/hook", EventTypes: []string{"material.created"}})
		if err != nil {
			t.Fatal(err)
		}
		start(t, q)
		id := createMaterial(t, w, a, "Walnut")
		waitFor(t, "two attempts", func() bool { return len(rcv.requests()) >= 2 })
		got := rcv.requests()
		if got[0].id == "" || got[0].id != got[1].id {
			t.Errorf("webhook-id %q then %q; want the same on a retry", got[0].id, got[1].id)
		}
		for i, r := range got {
			if !webhook.Verify(ep.Secret, r.id, r.timestamp, r.body, r.signature) {
				t.Errorf("attempt %d: signature %q does not verify", i+1, r.signature)
			}
			if d := time.Since(time.Unix(r.timestamp, 0)); d < -time.Second || d > time.Minute {
				t.Errorf("attempt %d: webhook-timestamp %d is not now", i+1, r.timestamp)
			}
		}
		var payload struct {
			Type      string
			Timestamp string
			Data      struct {
				ID   int
				Name string
			}
		}
		if err := json.Unmarshal(got[0].body, &payload); err != nil || payload.Type != "material.created" || payload.Data.ID != id || payload.Data.Name != "Walnut" {
			t.Errorf("payload %s; want material.created with the material", got[0].body)
		}
		if _, err := time.Parse(time.RFC3339, payload.Timestamp); err != nil {
			t.Errorf("timestamp %q is not RFC 3339", payload.Timestamp)
		}
		waitFor(t, "the delivery to succeed", func() bool {
			d, err := c.WebhookDelivery.Query().Only(w.sys)
			return err == nil && d.Status == webhookdelivery.StatusSUCCEEDED
		})
		d := c.WebhookDelivery.Query().OnlyX(w.sys)
		if d.Attempts != 2 || d.LastStatusCode == nil || *d.LastStatusCode != http.StatusNoContent || d.DeliveredAt == nil || d.LastError != nil {
			t.Errorf("delivery %+v; want 2 attempts, 204, delivered", d)
		}
		if webhook.MessageID(d.ID) != got[0].id {
			t.Errorf("webhook-id %q; want %q", got[0].id, webhook.MessageID(d.ID))
		}
	})
}

// TestReceiverDownLosesNothing: while the receiver is down, every attempt
// fails and the delivery ends FAILED with the last error; redelivered
// once the receiver is back, it arrives with the same webhook-id.
func TestReceiverDownLosesNothing(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		down := httptest.NewServer(http.NotFoundHandler())
		url := down.URL
		down.Close()
		q := queue(t, c, 20*time.Millisecond, 20*time.Millisecond)
		a := operations(c, q)
		if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: url}); err != nil {
			t.Fatal(err)
		}
		start(t, q)
		createMaterial(t, w, a, "Oak")
		waitFor(t, "the delivery to fail", func() bool {
			d, err := c.WebhookDelivery.Query().Only(w.sys)
			return err == nil && d.Status == webhookdelivery.StatusFAILED
		})
		d := c.WebhookDelivery.Query().OnlyX(w.sys)
		if d.Attempts != 3 || d.LastError == nil || d.DeliveredAt != nil {
			t.Errorf("failed delivery %+v; want 3 attempts and the last error", d)
		}
		// The receiver comes back on another port: point the endpoint there.
		rcv := newReceiver(t, http.StatusOK)
		u := rcv.URL
		if err := a.UpdateWebhookEndpoint(w.ctx, app.UpdateWebhookEndpoint{ID: d.EndpointID, URL: &u}); err != nil {
			t.Fatal(err)
		}
		if err := a.RedeliverWebhook(w.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the redelivery", func() bool { return len(rcv.requests()) == 1 })
		if got := rcv.requests()[0].id; got != webhook.MessageID(d.ID) {
			t.Errorf("redelivered with webhook-id %q; want %q", got, webhook.MessageID(d.ID))
		}
		waitFor(t, "the delivery to succeed", func() bool {
			return c.WebhookDelivery.GetX(w.sys, d.ID).Status == webhookdelivery.StatusSUCCEEDED
		})
	})
}

// TestOneDeliveryPerEventAcrossReplicas: two replicas' queues work the
// same database; each event reaches the receiver once.
func TestOneDeliveryPerEventAcrossReplicas(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c1, c2 := dbtest.Open(t, url), dbtest.Open(t, url)
			w := newWorld(t, c1)
			rcv := newReceiver(t, http.StatusOK)
			q1, q2 := queue(t, c1, time.Second), queue(t, c2, time.Second)
			a := operations(c1, q1)
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
				t.Fatal(err)
			}
			start(t, q1)
			start(t, q2)
			const n = 40
			for i := range n {
				createMaterial(t, w, a, fmt.Sprintf("m%d", i))
			}
			waitFor(t, "every delivery", func() bool {
				n, _ := c1.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(webhookdelivery.StatusSUCCEEDED)).Count(w.sys)
				return n == 40
			})
			time.Sleep(200 * time.Millisecond) // a duplicate would arrive now
			seen := map[string]int{}
			for _, r := range rcv.requests() {
				seen[r.id]++
			}
			if len(seen) != n {
				t.Errorf("%d distinct webhook-ids; want %d", len(seen), n)
			}
			for id, k := range seen {
				if k != 1 {
					t.Errorf("%s arrived %d times", id, k)
				}
			}
		})
	}
}

// TestDeliveryAfterRestart: a process that recorded its writes and died
// before delivering (its queue never worked) loses nothing: the next
// process to start delivers them.
func TestDeliveryAfterRestart(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c1 := dbtest.Open(t, url)
			w := newWorld(t, c1)
			rcv := newReceiver(t, http.StatusOK)
			a := operations(c1, queue(t, c1, time.Second)) // never started
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				createMaterial(t, w, a, fmt.Sprintf("m%d", i))
			}
			c1.Close()
			time.Sleep(100 * time.Millisecond)
			if n := len(rcv.requests()); n != 0 {
				t.Fatalf("%d deliveries before any queue ran", n)
			}
			c2 := dbtest.Open(t, url)
			start(t, queue(t, c2, time.Second))
			waitFor(t, "the 5 deliveries after the restart", func() bool { return len(rcv.requests()) == 5 })
		})
	}
}

// TestDeliveryGuardedAtConnection: an endpoint whose address turned
// private after registration (a record written past the check stands for
// a name that resolves elsewhere now) is not reached: the attempt fails
// with the guard's refusal.
func TestDeliveryGuardedAtConnection(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusOK)
		q := queueWith(t, c, webhook.Config{Schedule: []time.Duration{time.Hour}})
		dbtest.Must(c.WebhookEndpoint.Create().SetURL(rcv.URL).SetSecret(webhook.NewSecret()).Save(w.ctx))
		start(t, q)
		createMaterial(t, w, operations(c, q), "Pine")
		waitFor(t, "the attempt", func() bool {
			d, err := c.WebhookDelivery.Query().Only(w.sys)
			return err == nil && d.Attempts == 1
		})
		d := c.WebhookDelivery.Query().OnlyX(w.sys)
		if d.Status != webhookdelivery.StatusPENDING || d.LastError == nil || d.NextAttemptAt == nil {
			t.Errorf("delivery %+v; want a failed attempt, retried later", d)
		}
		if n := len(rcv.requests()); n != 0 {
			t.Errorf("the receiver on loopback was reached %d times", n)
		}
	})
}

// TestDispatchBoundsItsDeliveries: an owner with many endpoints has its
// events dispatched over several transactions of at most 1,000
// deliveries, none lost and none twice.
func TestDispatchBoundsItsDeliveries(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		q := queue(t, c, time.Hour) // never started: Dispatch alone
		a := operations(c, q)
		// More endpoints than an owner may keep by default (16).
		a.SetEvents(app.Events{Queue: q, Guard: &webhook.Guard{AllowPrivate: true}, MaxEndpoints: 40})
		for i := range 40 {
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: fmt.Sprintf("http://127.0.0.1:9/%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 30 {
			createMaterial(t, w, a, fmt.Sprintf("m%d", i))
		}
		var got []int
		for range 4 {
			n, err := q.Dispatch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		if fmt.Sprint(got) != "[25 5 0 0]" {
			t.Errorf("events dispatched %v; want [25 5 0 0] (25 events of 40 deliveries make 1,000)", got)
		}
		if n := c.WebhookDelivery.Query().CountX(w.sys); n != 1200 {
			t.Errorf("%d deliveries; want 1,200", n)
		}
		// One batch job per 100 deliveries of a dispatch: 10 and 2, each
		// delivery in one.
		js := jobs(t, c)
		inBatch := map[int]int{}
		for _, j := range js {
			if j.Kind != "webhook_batch" || len(j.Deliveries) > 100 {
				t.Errorf("job %s of %d deliveries; want batches of at most 100", j.Kind, len(j.Deliveries))
			}
			for _, id := range j.Deliveries {
				inBatch[id]++
			}
		}
		if len(js) != 12 || len(inBatch) != 1200 {
			t.Errorf("%d jobs for %d deliveries; want 12 batch jobs for the 1,200", len(js), len(inBatch))
		}
	})
}
