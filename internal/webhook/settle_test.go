package webhook_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// settling is a queue over c as the tests of lost jobs need it: the
// schedule given, its warnings dropped (a replica that dies logs), and
// lost jobs looked for every 50 ms rather than every minute.
func settling(t *testing.T, c *ent.Client, schedule ...time.Duration) *webhook.Queue {
	t.Helper()
	return queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, Schedule: schedule,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), SettleEvery: 50 * time.Millisecond})
}

// refuseUpdates installs a trigger that refuses the updates of
// webhook_deliveries for which when (an SQL condition on NEW) holds, as
// a database that fails mid-way would; the returned function removes it.
func refuseUpdates(t *testing.T, db *sql.DB, when string) (remove func()) {
	t.Helper()
	stmts := []string{fmt.Sprintf(`CREATE TRIGGER refuse BEFORE UPDATE ON webhook_deliveries WHEN (%s) BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`, when)}
	drop := []string{`DROP TRIGGER refuse`}
	if dbDialect(db) == dialect.Postgres {
		stmts = []string{
			`CREATE FUNCTION refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
			fmt.Sprintf(`CREATE TRIGGER refuse BEFORE UPDATE ON webhook_deliveries FOR EACH ROW WHEN (%s) EXECUTE FUNCTION refuse_update()`, when),
		}
		drop = []string{`DROP TRIGGER refuse ON webhook_deliveries`, `DROP FUNCTION refuse_update()`}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, s := range drop {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// dbDialect tells PostgreSQL from SQLite by asking the database.
func dbDialect(db *sql.DB) string {
	if _, err := db.Exec(`SELECT sqlite_version()`); err == nil {
		return dialect.SQLite
	}
	return dialect.Postgres
}

// jobState is the state of the only job of kind on c ("" for none).
func jobState(t *testing.T, c *ent.Client, kind string) string {
	t.Helper()
	state := ""
	for _, j := range jobs(t, c) {
		if j.Kind == kind {
			if state != "" {
				t.Fatalf("more than one %s job: %+v", kind, jobs(t, c))
			}
			state = j.State
		}
	}
	return state
}

// settled waits until every delivery of w is SUCCEEDED or FAILED and
// returns them.
func settled(t *testing.T, w world) []*ent.WebhookDelivery {
	t.Helper()
	waitFor(t, "every delivery to be settled (SUCCEEDED or FAILED)", func() bool {
		n, err := w.c.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(webhookdelivery.StatusPENDING)).Count(w.sys)
		return err == nil && n == 0
	})
	return w.c.WebhookDelivery.Query().AllX(w.sys)
}

// TestLastAttemptOutcomeNotRecorded: the last attempt of a delivery is
// made, but the database refuses to record its outcome (a hiccup); River
// then discards the job, which was on its last attempt. The delivery
// must not stay PENDING with no job behind it: it ends FAILED, saying
// why, and can be redelivered.
func TestLastAttemptOutcomeNotRecorded(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusInternalServerError)
		q := settling(t, c, 20*time.Millisecond) // two attempts: the batch's, then a job's
		a := operations(c, q)
		if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
			t.Fatal(err)
		}
		remove := refuseUpdates(t, database.Pool(c), "NEW.attempts = 2")
		start(t, q)
		createMaterial(t, w, a, "Ash")
		waitFor(t, "the last attempt's job to fail", func() bool {
			s := jobState(t, c, "webhook_delivery")
			return len(rcv.requests()) == 2 && s != "" && s != "running"
		})
		remove()
		ds := settled(t, w)
		if d := ds[0]; d.Status != webhookdelivery.StatusFAILED || d.LastError == nil {
			t.Errorf("delivery %+v; want FAILED with the reason", d)
		}
		if u := unsettled(t, w); len(u) > 0 {
			t.Errorf("%v have no live job", u)
		}
		if err := a.RedeliverWebhook(w.ctx, ds[0].ID); err != nil {
			t.Errorf("redelivering it: %v", err)
		}
	})
}

// TestLastAttemptLostWithItsReplica: replica 1 makes a delivery's last
// attempt and dies during the send (its receiver never answers, its
// database connections are gone). Replica 2 becomes the leader and
// River's rescuer finds the job stuck (its attempt is made an hour old,
// as time would) and, the attempts spent, discards it. The delivery must
// not stay PENDING: it ends FAILED and can be redelivered.
func TestLastAttemptLostWithItsReplica(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c1, c2 := dbtest.Open(t, url), dbtest.Open(t, url)
			w := newWorld(t, c2)
			release := make(chan struct{})
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				first := n == 1
				mu.Unlock()
				if first {
					rw.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				<-release
			}))
			t.Cleanup(srv.Close) // after release, below
			requests := func() int { mu.Lock(); defer mu.Unlock(); return n }
			q1 := settling(t, c1, 20*time.Millisecond)
			a := operations(c1, q1)
			if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			start(t, q1)
			t.Cleanup(func() { close(release) }) // before q1 stops
			createMaterial(t, w, a, "Birch")
			waitFor(t, "the last attempt to be under way", func() bool { return requests() == 2 })
			// Replica 1 dies: its connections are gone, its leadership
			// expires, and its job's attempt is old.
			c1.Close()
			db := database.Pool(c2)
			old := `now() - interval '1 hour'`
			if database.Dialect(c2) == dialect.SQLite {
				old = `datetime('now', 'subsec', '-1 hour')`
			}
			for _, s := range []string{`DELETE FROM river_leader`, `UPDATE river_job SET attempted_at = ` + old + ` WHERE state = 'running'`} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			start(t, settling(t, c2, 20*time.Millisecond))
			waitFor(t, "River's rescuer to take the job", func() bool { return jobState(t, c2, "webhook_delivery") != "running" })
			ds := settled(t, w)
			if d := ds[0]; d.Status != webhookdelivery.StatusFAILED || d.LastError == nil {
				t.Errorf("delivery %+v; want FAILED with the reason", d)
			}
			if u := unsettled(t, w); len(u) > 0 {
				t.Errorf("%v have no live job", u)
			}
		})
	}
}

// TestBatchLastRunFails: a batch job on its last run (River's attempt
// count brought there) fails, the database refusing what it records;
// River discards it. Its deliveries, never attempted, must not stay
// PENDING with no job: once the database is well they are delivered.
func TestBatchLastRunFails(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		rcv := newReceiver(t, http.StatusOK)
		q := settling(t, c, time.Hour)
		a := operations(c, q)
		if _, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rcv.URL}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			createMaterial(t, w, a, fmt.Sprintf("m%d", i))
		}
		if n, err := q.Dispatch(context.Background()); err != nil || n != 3 {
			t.Fatalf("dispatch: %d, %v", n, err)
		}
		db := database.Pool(c)
		if _, err := db.Exec(`UPDATE river_job SET attempt = max_attempts - 1 WHERE kind = 'webhook_batch'`); err != nil {
			t.Fatal(err)
		}
		remove := refuseUpdates(t, db, "1 = 1")
		start(t, q)
		waitFor(t, "the batch job's last run to fail", func() bool { return jobState(t, c, "webhook_batch") == "discarded" })
		remove()
		for _, d := range settled(t, w) {
			if d.Status != webhookdelivery.StatusSUCCEEDED {
				t.Errorf("delivery %+v; want SUCCEEDED", d)
			}
		}
		if n := len(rcv.requests()); n != 3 {
			t.Errorf("%d webhooks received; want 3", n)
		}
	})
}
