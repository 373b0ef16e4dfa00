package database_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestConcurrentMigrations starts as many migrations of one empty
// database at once as replicas starting together would (each with its
// own client, as each replica has): every one succeeds, and the schema
// is exactly the one a single migration makes, triggers included.
func TestConcurrentMigrations(t *testing.T) {
	const replicas = 4
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			reference := b.URL(t)
			dbtest.Open(t, reference)

			// Each replica's client is opened first, one after the other
			// (several processes creating one new SQLite file at the same
			// instant is not what this tests); their migrations then start
			// together.
			shared := b.URL(t)
			clients := make([]*ent.Client, replicas)
			for i := range clients {
				c, err := database.Open(ctx, shared)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				clients[i] = c
			}
			start := make(chan struct{})
			errs := make([]error, replicas)
			var wg sync.WaitGroup
			for i, c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = database.Migrate(ctx, c, shared)
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			if t.Failed() {
				return
			}

			if got, want := schemaOf(t, shared), schemaOf(t, reference); got != want {
				t.Errorf("schema after %d concurrent migrations differs from one migration's:\n got %s\nwant %s", replicas, got, want)
			}
			// The schema works: an order is written and counted once by
			// the triggers.
			c := dbtest.Open(t, shared)
			sys := privacy.DecisionContext(ctx, privacy.Allow)
			o := dbtest.Must(c.Owner.Create().SetName("A").Save(sys))
			conf := dbtest.Must(c.Configurator.Create().SetName("Sofa").SetOwnerID(o.ID).Save(sys))
			dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(1).
				SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(sys))
			counts := dbtest.Must(c.OrderCount.Query().All(sys))
			if len(counts) != 1 || counts[0].Orders != 1 {
				t.Errorf("order counts after one order: %+v; want one row counting 1", counts)
			}
		})
	}
}

// schemaOf describes the tables, columns, indexes and triggers of the
// database at rawURL, in a form that does not depend on the schema's name.
func schemaOf(t *testing.T, rawURL string) string {
	t.Helper()
	db, dialect, err := database.OpenSQL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var queries []string
	if dialect == "sqlite3" {
		queries = []string{`SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'`}
	} else {
		queries = []string{
			`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
			   FROM information_schema.columns WHERE table_schema = current_schema()`,
			`SELECT indexname || ' ' || replace(indexdef, current_schema() || '.', '') FROM pg_indexes WHERE schemaname = current_schema()`,
			`SELECT tgname || ' ' || tgrelid::regclass::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			   JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal`,
			`SELECT conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
			   WHERE n.nspname = current_schema()`,
		}
	}
	var lines []string
	for _, q := range queries {
		lines = append(lines, rowsOf(t, db, q)...)
	}
	if len(lines) < 20 {
		t.Fatalf("schema of %s has only %d entries: %v", redactedPath(rawURL), len(lines), lines)
	}
	sort.Strings(lines)
	return fmt.Sprintf("%d entries: %s", len(lines), strings.Join(lines, "; "))
}

func rowsOf(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func redactedPath(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "?"
	}
	return u.Path
}
