package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// hanging is a receiver on loopback whose every request waits until the
// test ends (or the sender gives up): an owner's endpoints that answer
// nothing until the attempt's timeout.
type hanging struct {
	*httptest.Server
	mu                 sync.Mutex
	inFlight, max, got int
	// ended counts the requests that ended before the test did: the
	// sender gave up on them (its timeout).
	ended int
	// first is when the first request arrived.
	first time.Time
}

func newHanging(t *testing.T) *hanging {
	h := &hanging{}
	release := make(chan struct{})
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.inFlight++
		h.got++
		if h.got == 1 {
			h.first = time.Now()
		}
		h.max = max(h.max, h.inFlight)
		h.mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
			h.mu.Lock()
			h.ended++
			h.mu.Unlock()
		}
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}))
	t.Cleanup(func() { close(release); h.Close() })
	return h
}

// counts returns the requests in flight, the most ever in flight at once,
// the requests received and those that ended before the test.
func (h *hanging) counts() (inFlight, most, got, ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, h.max, h.got, h.ended
}

// TestOwnerShareOfSending: owner A's 16 endpoints hang; A has events to
// deliver (first attempts, in batches) and redeliveries (a job each) in
// flight, more than the replica sends at once. Owner B's webhook still
// arrives while every one of A's requests is hanging (before the first
// of them times out), and A never has more than its share of the
// replica's attempts in flight. On a single sending pool B's webhook
// waited for A's attempts to time out.
func TestOwnerShareOfSending(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		sys := dbtest.Sys
		ctxA := dbtest.NewTenant(t, c, "A").Dash(1)
		ctxB := dbtest.NewTenant(t, c, "B").Dash(2)
		slow := newHanging(t)
		fast := newReceiver(t, http.StatusOK)
		q := queue(t, c, time.Hour)
		a := operations(c, q)
		var endpoints []int
		for i := range webhook.DefaultMaxEndpoints {
			ep, err := a.CreateWebhookEndpoint(ctxA, app.CreateWebhookEndpoint{URL: fmt.Sprintf("%s/%d", slow.URL, i)})
			if err != nil {
				t.Fatal(err)
			}
			endpoints = append(endpoints, ep.Endpoint.ID)
		}
		if _, err := a.CreateWebhookEndpoint(ctxB, app.CreateWebhookEndpoint{URL: fast.URL}); err != nil {
			t.Fatal(err)
		}
		// A's failed deliveries, redelivered: a job each, due at once.
		createMaterial(t, world{c: c, ctx: ctxA, sys: sys}, a, "old")
		if _, err := q.Dispatch(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, d := range c.WebhookDelivery.Query().AllX(sys) {
			c.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusFAILED).SetAttempts(8).ExecX(sys)
			if err := a.RedeliverWebhook(ctxA, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		// And new events: 48 first attempts in batches.
		for i := range 3 {
			createMaterial(t, world{c: c, ctx: ctxA, sys: sys}, a, fmt.Sprintf("a%d", i))
		}
		start(t, q)
		waitFor(t, "A's endpoints to hang", func() bool { n, _, _, _ := slow.counts(); return n >= 4 })
		began := time.Now()
		createMaterial(t, world{c: c, ctx: ctxB, sys: sys}, a, "b")
		waitFor(t, "B's webhook", func() bool { return len(fast.requests()) == 1 })
		delay := time.Since(began)
		inFlight, most, got, ended := slow.counts()
		slow.mu.Lock()
		hung := time.Since(slow.first)
		slow.mu.Unlock()
		t.Logf("B's webhook arrived %v after its write; A: %d requests in flight, at most %d at once, %d received, %d timed out",
			delay, inFlight, most, got, ended)
		// Causal, not a timing: A's attempts end only at their timeout, so
		// a webhook of B's that waited for one of them came after it.
		if ended > 0 || hung >= webhook.AttemptTimeout {
			t.Errorf("B's webhook arrived %v after A's first request, once %d of A's hanging attempts had timed out; want it not to wait for A", hung, ended)
		}
		if share := webhook.DefaultOwnerShare(20); most > share {
			t.Errorf("A had %d attempts in flight at once; want at most its share, %d of the replica's 20", most, share)
		}
	})
}
