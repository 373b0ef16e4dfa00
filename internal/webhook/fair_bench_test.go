package webhook_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// BenchmarkOtherOwnerDelay measures how long owner B's webhooks take
// while owner A's 16 endpoints all hang until the attempt's timeout
// (10 s) and A keeps writing: A writes an event every 100 ms, B one
// every 250 ms, for 25 s (past A's first timeouts, so that A's retries
// and deferred deliveries are in the queue too), on each database. It
// reports the delay from B's write to B's receiver, median and worst
// (ms), over B's webhooks that arrived; a webhook of B's still missing
// 10 s after the run counts as the run's length.
//
//	TEST_DATABASE_URL=... go test ./internal/webhook -run '^$' -bench OtherOwnerDelay -benchtime 1x
func BenchmarkOtherOwnerDelay(b *testing.B) {
	for _, be := range dbtest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			for range b.N {
				p50, worst := otherOwnerDelay(b, be)
				b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
				b.ReportMetric(float64(worst.Milliseconds()), "max-ms")
			}
		})
	}
}

func otherOwnerDelay(b *testing.B, be dbtest.Backend) (p50, worst time.Duration) {
	c := dbtest.Open(b, be.URL(b))
	ctxA, ctxB := dbtest.NewTenant(b, c, "A").Dash(1), dbtest.NewTenant(b, c, "B").Dash(2)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.Header.Get("webhook-id")] = time.Now()
		mu.Unlock()
	}))
	defer fast.Close()
	q, err := webhook.NewQueue(c, database.Pool(c), database.Dialect(c), webhook.Config{Guard: &webhook.Guard{AllowPrivate: true},
		Schedule: []time.Duration{5 * time.Second, time.Hour}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	a := operations(c, q)
	for i := range webhook.DefaultMaxEndpoints {
		if _, err := a.CreateWebhookEndpoint(ctxA, app.CreateWebhookEndpoint{URL: fmt.Sprintf("%s/%d", slow.URL, i)}); err != nil {
			b.Fatal(err)
		}
	}
	epB, err := a.CreateWebhookEndpoint(ctxB, app.CreateWebhookEndpoint{URL: fast.URL})
	if err != nil {
		b.Fatal(err)
	}
	if err := q.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer q.Stop(b.Context())
	wrote := map[int]time.Time{} // B's material id: when its write returned
	end := time.Now().Add(25 * time.Second)
	tickA, tickB := time.NewTicker(100*time.Millisecond), time.NewTicker(250*time.Millisecond)
	defer tickA.Stop()
	defer tickB.Stop()
	for n := 0; time.Now().Before(end); n++ {
		select {
		case <-tickA.C:
			if _, err := a.CreateMaterial(ctxA, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: fmt.Sprintf("a%d", n)}}); err != nil {
				b.Fatal(err)
			}
		case <-tickB.C:
			id, err := a.CreateMaterial(ctxB, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: fmt.Sprintf("b%d", n)}})
			if err != nil {
				b.Fatal(err)
			}
			wrote[id] = time.Now()
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var delays []time.Duration
	for {
		delays = delays[:0]
		missing := 0
		byMaterial := map[int]int{}
		for _, d := range c.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(epB.Endpoint.ID)).WithEvent().AllX(dbtest.Sys) {
			byMaterial[d.Edges.Event.ResourceID] = d.ID
		}
		mu.Lock()
		for material, at := range wrote {
			if got, ok := arrived[webhook.MessageID(byMaterial[material])]; ok && byMaterial[material] != 0 {
				delays = append(delays, got.Sub(at))
			} else {
				missing++
				delays = append(delays, time.Since(at))
			}
		}
		mu.Unlock()
		if missing == 0 || time.Now().After(deadline) {
			b.Logf("%d webhooks of B, %d missing", len(wrote), missing)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	slices.Sort(delays)
	return delays[len(delays)/2], delays[len(delays)-1]
}
