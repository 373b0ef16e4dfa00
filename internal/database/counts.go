package database

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/ent"
)

// The order_counts table (ent/schema/ordercount.go) holds the number of
// orders of each owner and configurator, so that the exact total of an
// owner's order list costs a few rows however many orders there are.
// Triggers on orders keep it exact in the same transaction as every
// insert, delete, change of owner or configurator, and truncation, on
// both databases, whichever path wrote the orders (the API, the demo
// seed, a bulk load). PostgreSQL's triggers are per statement, with
// transition tables, so a bulk insert updates each counter once; SQLite
// has only row triggers. The triggers are created by Migrate; the first
// time, the counts of the orders already there are filled in under a lock
// that keeps writers out meanwhile.
//
// A count is the sum of its key's rows, one per slot. On PostgreSQL a
// change adds to the first of the key's rows that no other open
// transaction holds (FOR NO KEY UPDATE SKIP LOCKED), and only when every
// existing row is held to a new slot (upserted, at random among the
// countSlots the key does not have yet): concurrent orders of one
// configurator do not wait for each other's commit, a key gains a row
// only when all it has are held at once (countSlots at most, summed on
// read), and each row is updated only as often as its share of the orders (the dead versions an update
// leaves are pruned from the page as it fills: HOT, since no indexed
// column changes; the table's fillfactor leaves room for that). SQLite
// has one writer at a time and uses slot 0 only.

// countSlots bounds the rows of one owner and configurator (PostgreSQL):
// more concurrent writers of one key than this wait for each other.
const countSlots = 32

// postgresCounts creates the PostgreSQL functions and triggers; it is
// idempotent, and replaces the functions of older releases.
var postgresCounts = postgresDateCounts + `
CREATE OR REPLACE FUNCTION order_counts_bump(o bigint, c bigint, n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF n = 0 THEN RETURN; END IF;
  UPDATE order_counts SET orders = orders + n WHERE id = (
    SELECT id FROM order_counts WHERE owner_id = o AND configurator_id = c
    LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED);
  IF NOT FOUND THEN
    INSERT INTO order_counts (owner_id, configurator_id, slot, orders)
      VALUES (o, c, coalesce((SELECT s FROM generate_series(0, ` + fmt.Sprint(countSlots-1) + `) s
        WHERE NOT EXISTS (SELECT FROM order_counts WHERE owner_id = o AND configurator_id = c AND slot = s)
        ORDER BY random() LIMIT 1), floor(random() * ` + fmt.Sprint(countSlots) + `)::int), n)
    ON CONFLICT (owner_id, configurator_id, slot) DO UPDATE SET orders = order_counts.orders + EXCLUDED.orders;
  END IF;
END $$;
` + postgresCountRows("order_counts_add", "new_rows", "") + postgresCountRows("order_counts_remove", "old_rows", "-") + `CREATE OR REPLACE FUNCTION order_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT owner_id, configurator_id, sum(n) AS n FROM (
      SELECT owner_id, configurator_id, -count(*) AS n FROM old_rows GROUP BY 1, 2
      UNION ALL
      SELECT owner_id, configurator_id, count(*) FROM new_rows GROUP BY 1, 2) d
    GROUP BY 1, 2 ORDER BY 1, 2 LOOP
    PERFORM order_counts_bump(r.owner_id, r.configurator_id, r.n::bigint);
  END LOOP;
  FOR r IN SELECT owner_id, configurator_id, month, day, sum(n) AS n FROM (
      SELECT owner_id, configurator_id, p.month, p.day, -count(*) AS n FROM ` + postgresPeriods("old_rows") + ` GROUP BY 1, 2, 3, 4
      UNION ALL
      SELECT owner_id, configurator_id, p.month, p.day, count(*) FROM ` + postgresPeriods("new_rows") + ` GROUP BY 1, 2, 3, 4) d
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LOOP
    PERFORM order_date_counts_bump(r.owner_id, r.configurator_id, r.month, r.day, r.n::bigint);
  END LOOP;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION order_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM order_counts;
  DELETE FROM order_date_counts;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER order_counts_insert AFTER INSERT ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_add();
CREATE OR REPLACE TRIGGER order_counts_delete AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_remove();
CREATE OR REPLACE TRIGGER order_counts_update AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_move();
CREATE OR REPLACE TRIGGER order_counts_truncate AFTER TRUNCATE ON orders
  FOR EACH STATEMENT EXECUTE FUNCTION order_counts_clear();
`

// postgresCountRows creates the trigger function name that adds (sign "")
// or takes away (sign "-") the orders of the transition table rows in
// both counts.
func postgresCountRows(name, rows, sign string) string {
	return `CREATE OR REPLACE FUNCTION ` + name + `() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  FOR r IN SELECT owner_id, configurator_id, count(*) AS n FROM ` + rows + ` GROUP BY 1, 2 ORDER BY 1, 2 LOOP
    PERFORM order_counts_bump(r.owner_id, r.configurator_id, ` + sign + `r.n);
  END LOOP;
  FOR r IN SELECT owner_id, configurator_id, p.month, p.day, count(*) AS n FROM ` + postgresPeriods(rows) + `
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LOOP
    PERFORM order_date_counts_bump(r.owner_id, r.configurator_id, r.month, r.day, ` + sign + `r.n);
  END LOOP;
  RETURN NULL;
END $$;
`
}

// postgresCountsStorage are order_counts' storage parameters: room on
// each page for the new versions of updated rows (so that they stay
// HOT and are pruned without VACUUM), and autovacuum after a fixed
// number of dead versions rather than a fraction of a small table.
const postgresCountsStorage = "fillfactor=50,autovacuum_vacuum_scale_factor=0,autovacuum_vacuum_threshold=1000"

// sqliteCounts creates the SQLite triggers (slot 0 only); they replace
// those of older releases, whose upserts named the index before slots.
const sqliteCounts = `
DROP TRIGGER IF EXISTS order_counts_insert;
DROP TRIGGER IF EXISTS order_counts_delete;
DROP TRIGGER IF EXISTS order_counts_update;
CREATE TRIGGER order_counts_insert AFTER INSERT ON orders BEGIN
  INSERT INTO order_counts (owner_id, configurator_id, slot, orders) VALUES (NEW.owner_id, NEW.configurator_id, 0, 1)
  ON CONFLICT (owner_id, configurator_id, slot) DO UPDATE SET orders = orders + 1;
END;
CREATE TRIGGER order_counts_delete AFTER DELETE ON orders BEGIN
  INSERT INTO order_counts (owner_id, configurator_id, slot, orders) VALUES (OLD.owner_id, OLD.configurator_id, 0, -1)
  ON CONFLICT (owner_id, configurator_id, slot) DO UPDATE SET orders = orders - 1;
END;
CREATE TRIGGER order_counts_update AFTER UPDATE OF owner_id, configurator_id ON orders BEGIN
  INSERT INTO order_counts (owner_id, configurator_id, slot, orders) VALUES (OLD.owner_id, OLD.configurator_id, 0, -1)
  ON CONFLICT (owner_id, configurator_id, slot) DO UPDATE SET orders = orders - 1;
  INSERT INTO order_counts (owner_id, configurator_id, slot, orders) VALUES (NEW.owner_id, NEW.configurator_id, 0, 1)
  ON CONFLICT (owner_id, configurator_id, slot) DO UPDATE SET orders = orders + 1;
END;
`

// recount fills order_counts from the orders themselves, one row (slot
// 0) per key.
const recount = `
DELETE FROM order_counts;
INSERT INTO order_counts (owner_id, configurator_id, slot, orders)
  SELECT owner_id, configurator_id, 0, count(*) FROM orders GROUP BY owner_id, configurator_id;
`

// sqliteCountsBeforeSlots tells whether an SQLite database has the order
// counts of the releases before slots (an order_counts table without
// its slot column).
const sqliteCountsBeforeSlots = `SELECT count(*) FROM sqlite_master m WHERE m.name = 'order_counts' AND NOT EXISTS (
  SELECT 1 FROM pragma_table_info('order_counts') WHERE name = 'slot')`

// prepareCounts readies an SQLite database of a release before slots for
// ent's migration, which rebuilds order_counts (a copy renamed in its
// place: SQLite refuses that while the triggers on orders name the table):
// it drops the triggers, so that installCounts creates them anew and
// recounts the orders, in its transaction, afterwards. Nothing else needs
// it; on PostgreSQL the migration alters the table in place.
func prepareCounts(ctx context.Context, c *ent.Client, dialectName string) error {
	if dialectName != dialect.SQLite {
		return nil
	}
	n, err := scalar[int](ctx, c, sqliteCountsBeforeSlots)
	if err != nil {
		return fmt.Errorf("look for order counts before slots: %w", err)
	}
	if n == 0 {
		return nil
	}
	_, err = c.ExecContext(ctx, `DROP TRIGGER IF EXISTS order_counts_insert; DROP TRIGGER IF EXISTS order_counts_delete;
DROP TRIGGER IF EXISTS order_counts_update;`)
	if err != nil {
		return fmt.Errorf("drop the order count triggers before slots: %w", err)
	}
	return nil
}

// installCounts creates the triggers that keep order_counts and
// order_date_counts exact and, for a table whose triggers are new, counts
// the orders already there, in one transaction that keeps order writers
// out until the counts and the triggers are in place.
func installCounts(ctx context.Context, c *ent.Client, dialectName string) error {
	tx, err := c.Tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists, datesExist, create string
	switch dialectName {
	case dialect.Postgres:
		if _, err := tx.ExecContext(ctx, "LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("lock orders: %w", err)
		}
		exists = "SELECT count(*) FROM pg_trigger WHERE tgname = 'order_counts_insert' AND tgrelid = 'orders'::regclass"
		datesExist = "SELECT count(*) FROM pg_proc WHERE proname = 'order_date_counts_bump' AND pronamespace = current_schema()::regnamespace"
		create = postgresCounts
	case dialect.SQLite:
		exists = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'order_counts_insert'"
		datesExist = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'order_date_counts_insert'"
		create = sqliteCounts + sqliteDateCounts
	default:
		return fmt.Errorf("order counts: unsupported dialect %s", dialectName)
	}
	n, err := scalar[int](ctx, tx, exists)
	if err != nil {
		return fmt.Errorf("look for the order count triggers: %w", err)
	}
	dates, err := scalar[int](ctx, tx, datesExist)
	if err != nil {
		return fmt.Errorf("look for the order date count triggers: %w", err)
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create the order count triggers: %w", err)
	}
	if dialectName == dialect.Postgres {
		for _, table := range []string{"order_counts", "order_date_counts"} {
			if err := setCountsStorage(ctx, tx, table); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, recount); err != nil {
			return fmt.Errorf("count the orders: %w", err)
		}
	}
	if dates == 0 {
		if _, err := tx.ExecContext(ctx, recountDates[dialectName]); err != nil {
			return fmt.Errorf("count the orders by month and day: %w", err)
		}
	}
	return tx.Commit()
}

// querier is an ent client or transaction, for raw queries.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// scalar runs a query of one value through q; no row is T's zero value.
func scalar[T any](ctx context.Context, q querier, query string, args ...any) (T, error) {
	var v T
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return v, err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return v, err
		}
	}
	return v, rows.Err()
}

// setCountsStorage gives a table of counts (order_counts,
// order_date_counts) its storage parameters (postgresCountsStorage) when
// it has others.
func setCountsStorage(ctx context.Context, tx *ent.Tx, table string) error {
	have, err := scalar[string](ctx, tx, "SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = $1::regclass", table)
	if err != nil {
		return fmt.Errorf("read the storage of %s: %w", table, err)
	}
	if have == postgresCountsStorage {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "ALTER TABLE "+table+" SET ("+postgresCountsStorage+")"); err != nil {
		return fmt.Errorf("set the storage of %s: %w", table, err)
	}
	return nil
}

// VacuumCounts reclaims the dead versions of the rows of order_counts
// and order_date_counts on PostgreSQL (on SQLite, which rewrites rows in place, it does nothing).
// Every order updates a counter row, and concurrent orders keep its page
// pinned, so the updates' own pruning rarely runs: without autovacuum
// (it may be off, as on many test servers) the table grows by a page
// every hundred orders and reading the counts slows with it. VACUUM of a
// table of a few dozen rows costs about a millisecond; it skips a table
// another replica is vacuuming and never truncates it (truncation takes
// an exclusive lock that order writers would queue behind).
func VacuumCounts(ctx context.Context, c *ent.Client) error {
	db := Pool(c)
	if db == nil || Dialect(c) != dialect.Postgres {
		return nil
	}
	if _, err := db.ExecContext(ctx, "VACUUM (SKIP_LOCKED, TRUNCATE false) order_counts, order_date_counts"); err != nil {
		return fmt.Errorf("vacuum the order counts: %w", err)
	}
	return nil
}

// VacuumCountsEvery is how often serve runs VacuumCounts at most: at a
// thousand orders a second the table holds at most some 5,000 dead
// versions (about forty pages) between two runs.
const VacuumCountsEvery = 5 * time.Second

// CountsVacuumer returns what runs VacuumCounts every interval until ctx
// is done, or nil where the service need not: on SQLite, and on a
// PostgreSQL server whose autovacuum is on, where the migration's storage
// parameters of the counts (postgresCountsStorage: autovacuum after 1,000
// dead versions, whatever the table's size) leave the maintenance to
// PostgreSQL. With autovacuum off (as on the development server and in
// CI) the counts' dead versions would pile up with every order and slow
// every total (bench/RESULTS.md, "the counts vacuumed by the service"):
// the service vacuums them, but only after this replica wrote orders
// since the last run, so an idle replica never vacuums (issue 42). Call
// it before the client serves: it hooks the client's order writes. A
// failed vacuum (the database away) is logged and tried again at the next
// tick.
func CountsVacuumer(ctx context.Context, c *ent.Client, log *slog.Logger) func(ctx context.Context, every time.Duration) {
	if Dialect(c) != dialect.Postgres {
		return nil
	}
	on, err := scalar[string](ctx, Pool(c), "SHOW autovacuum")
	if err != nil {
		log.Warn("could not read the server's autovacuum setting; the order counts are vacuumed by the service", "err", err)
	}
	if on == "on" {
		return nil
	}
	var wrote atomic.Bool
	c.Order.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			wrote.Store(true)
			return next.Mutate(ctx, m)
		})
	})
	return func(ctx context.Context, every time.Duration) {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if !wrote.Swap(false) {
				continue
			}
			if err := VacuumCounts(ctx, c); err != nil && ctx.Err() == nil {
				log.Warn("could not vacuum the order counts", "err", err)
			}
		}
	}
}
