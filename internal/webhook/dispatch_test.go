package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// TestDispatchVacuumsEvents: after every VacuumAfter events it dispatched,
// the dispatch loop vacuums the events table on PostgreSQL, so that the
// entries dispatched events leave in events_undispatched do not pile up
// for every later dispatch to walk past (autovacuum is off on the test
// server, as on many). On SQLite the events are dispatched all the same.
func TestDispatchVacuumsEvents(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		q := queueWith(t, c, webhook.Config{Guard: &webhook.Guard{AllowPrivate: true}, VacuumAfter: 3})
		a := operations(c, q)
		for i := range 7 {
			createMaterial(t, w, a, fmt.Sprintf("m%d", i))
		}
		vacuums := func() (n int) {
			if database.Dialect(c) != dialect.Postgres {
				return 0
			}
			if err := database.Pool(c).QueryRow(`SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = 'events'::regclass`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := vacuums(); n != 0 {
			t.Fatalf("events vacuumed %d times before the queue started", n)
		}
		start(t, q)
		waitFor(t, "the 7 events to be dispatched", func() bool {
			return c.Event.Query().Where(event.DispatchedAtIsNil()).CountX(w.sys) == 0
		})
		if database.Dialect(c) == dialect.Postgres {
			waitFor(t, "a vacuum of events", func() bool { return vacuums() >= 1 })
		}
	})
}

// TestUndispatchedReadByIndexScan: the dispatch reads the events to
// dispatch by an index scan of events_undispatched on PostgreSQL, the
// plan that marks the entries of dispatched events dead once and skips
// them thereafter, and not by the bitmap or sequential scan the planner
// picks for a table it has no statistics of, which read every one of
// them again at every dispatch.
func TestUndispatchedReadByIndexScan(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		if database.Dialect(c) != dialect.Postgres {
			t.Skip("PostgreSQL only: SQLite has no other plan")
		}
		owner := dbtest.NewTenant(t, c, "B").ID
		if _, err := database.Pool(c).Exec(`INSERT INTO events (owner_id, type, payload, resource_id, created_at, dispatched_at)
			SELECT $1, 'material.created', '\x7b7d', g, now(), CASE WHEN g <= 5000 THEN now() END FROM generate_series(1, 5010) g`, owner); err != nil {
			t.Fatal(err)
		}
		plan, err := webhook.ExplainUndispatched(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "Index Scan using events_undispatched") || strings.Contains(plan, "Bitmap") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("plan of the dispatch's read:\n%s\nwant an index scan of events_undispatched", plan)
		}
	})
}
