package database_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// key is an owner and configurator.
type key struct{ owner, conf int }

// countsOf reads the counts order_counts holds (the sum of each key's
// slots; keys that sum to 0 left out) and those the orders make.
func countsOf(t testing.TB, db *sql.DB) (kept, real map[key]int) {
	t.Helper()
	read := func(q string) map[key]int {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[key]int{}
		for rows.Next() {
			var k key
			var n int
			if err := rows.Scan(&k.owner, &k.conf, &n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				m[k] = n
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	return read("SELECT owner_id, configurator_id, sum(orders) FROM order_counts GROUP BY owner_id, configurator_id"),
		read("SELECT owner_id, configurator_id, count(*) FROM orders GROUP BY owner_id, configurator_id")
}

// checkCounts fails the test when order_counts or order_date_counts do
// not match the orders.
func checkCounts(t testing.TB, db *sql.DB, when string) {
	t.Helper()
	kept, real := countsOf(t, db)
	if !maps.Equal(kept, real) {
		t.Errorf("%s: order_counts says %v; the orders are %v", when, kept, real)
	}
	keptDates, realDates := dateCountsOf(t, db)
	if !maps.Equal(keptDates, realDates) {
		t.Errorf("%s: order_date_counts says %v; the orders are %v", when, keptDates, realDates)
	}
}

// period is an owner, a configurator and a UTC month or day (YYYY-MM-DD).
type period struct {
	owner, conf int
	month       bool
	day         string
}

// dateCountsOf reads the counts order_date_counts holds (the sum of each
// period's slots; periods that sum to 0 left out) and those the orders
// make, their days taken in Go from each order's created_at: its UTC date
// on PostgreSQL (a timestamptz), on SQLite the date it was written with
// (the text the list's filters compare).
func dateCountsOf(t testing.TB, db *sql.DB) (kept, real map[period]int) {
	t.Helper()
	kept, real = map[period]int{}, map[period]int{}
	_, err := db.Exec("SELECT sqlite_version()")
	sqlite := err == nil
	rows, err := db.Query("SELECT owner_id, configurator_id, month, day, sum(orders) FROM order_date_counts GROUP BY owner_id, configurator_id, month, day")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p period
		var day any
		var n int
		if err := rows.Scan(&p.owner, &p.conf, &p.month, &day, &n); err != nil {
			t.Fatal(err)
		}
		switch d := day.(type) {
		case time.Time:
			p.day = d.Format(time.DateOnly)
		case string:
			p.day = d
		default:
			t.Fatalf("a day of type %T", day)
		}
		if n != 0 {
			kept[p] = n
		}
	}
	rows.Close()
	rows, err = db.Query("SELECT owner_id, configurator_id, created_at FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p period
		var at time.Time
		if err := rows.Scan(&p.owner, &p.conf, &at); err != nil {
			t.Fatal(err)
		}
		if !sqlite {
			at = at.UTC()
		}
		p.day = at.Format(time.DateOnly)
		real[p]++
		p.month, p.day = true, at.Format("2006-01")+"-01"
		real[p]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return kept, real
}

// newOrder creates an order of owner and conf with c (a client or a
// transaction's).
func newOrder(ctx context.Context, c *ent.Client, owner, conf int) (*ent.Order, error) {
	return c.Order.Create().SetOwnerID(owner).SetConfiguratorID(conf).SetPrice(1).
		SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage(`{}`)).Save(ctx)
}

// TestOrderCountsExact writes orders every way the database allows (one
// at a time, in bulk, deletions, moves to another configurator or owner,
// updates of other columns, truncation) and checks the counts after each.
func TestOrderCountsExact(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := dbtest.Sys
			url := b.URL(t)
			c := dbtest.Open(t, url)
			db := dbtest.SQL(t, url)
			exec := func(q string) {
				t.Helper()
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			A, B := dbtest.NewTenant(t, c, "A", "Sofa", "Chair"), dbtest.NewTenant(t, c, "B", "Lamp")
			o1, o2, a, b2, x := A.ID, B.ID, A.Confs[0].ID, A.Confs[1].ID, B.Confs[0].ID

			var ids []int
			for range 3 {
				ids = append(ids, dbtest.Must(newOrder(ctx, c, o1, a)).ID)
			}
			checkCounts(t, db, "single inserts")
			var bulk []*ent.OrderCreate
			for i := range 7 {
				conf, owner := a, o1
				if i%3 == 1 {
					conf = b2
				} else if i%3 == 2 {
					conf, owner = x, o2
				}
				bulk = append(bulk, c.Order.Create().SetOwnerID(owner).SetConfiguratorID(conf).SetPrice(1).
					SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage(`{}`)))
			}
			for _, o := range dbtest.Must(c.Order.CreateBulk(bulk...).Save(ctx)) {
				ids = append(ids, o.ID)
			}
			checkCounts(t, db, "a bulk insert over three keys")
			if kept, _ := countsOf(t, db); kept[key{o1, a}] != 6 || kept[key{o1, b2}] != 2 || kept[key{o2, x}] != 2 {
				t.Fatalf("counts %v; want 6, 2 and 2", kept)
			}

			exec(fmt.Sprintf("DELETE FROM orders WHERE id = %d", ids[0]))
			checkCounts(t, db, "one deletion")
			exec(fmt.Sprintf("DELETE FROM orders WHERE configurator_id = %d", b2))
			checkCounts(t, db, "a deletion of a key's every order")
			exec(fmt.Sprintf("UPDATE orders SET configurator_id = %d WHERE id = %d", b2, ids[1]))
			checkCounts(t, db, "a move to another configurator")
			exec(fmt.Sprintf("UPDATE orders SET owner_id = %d, configurator_id = %d WHERE id IN (%d, %d)", o2, x, ids[2], ids[3]))
			checkCounts(t, db, "a move of two orders to another owner")
			exec("UPDATE orders SET status = 'paid'")
			checkCounts(t, db, "an update of every order's status")
			exec(fmt.Sprintf("UPDATE orders SET created_at = '2024-02-29 23:59:59+00:00' WHERE id IN (%d, %d)", ids[1], ids[4]))
			checkCounts(t, db, "a move of two orders to another day and month")
			exec(fmt.Sprintf("UPDATE orders SET created_at = '2024-03-01 00:00:00+00:00' WHERE id = %d", ids[4]))
			checkCounts(t, db, "a move of an order to the next day and month")
			if kept, _ := countsOf(t, db); kept[key{o1, a}] != 2 || kept[key{o1, b2}] != 1 || kept[key{o2, x}] != 4 {
				t.Fatalf("counts %v; want 2, 1 and 4", kept)
			}
			if b.Name == "postgres" {
				exec("TRUNCATE orders")
				checkCounts(t, db, "truncation")
				dbtest.Must(newOrder(ctx, c, o1, a))
				checkCounts(t, db, "an insert after truncation")
			}
			exec("DELETE FROM orders")
			checkCounts(t, db, "deleting every order")
		})
	}
}

// TestOrderCountsDoNotSerialiseOrders holds one transaction open after it
// created an order and creates another order of the same configurator
// meanwhile: on PostgreSQL the second must not wait for the first's commit
// (with one counter row per configurator it waited on its row lock until
// lock_timeout). Both are counted once they commit, in two slots.
func TestOrderCountsDoNotSerialiseOrders(t *testing.T) {
	url := dbtest.Postgres(t) // SQLite has one writer at a time
	ctx := dbtest.Sys
	c := dbtest.Open(t, url)
	db := dbtest.SQL(t, url)
	A := dbtest.NewTenant(t, c, "A", "Sofa")
	o, conf := A.ID, A.Confs[0].ID
	dbtest.Must(newOrder(ctx, c, o, conf)) // the key's first row, committed

	first := dbtest.Must(c.Tx(ctx))
	defer first.Rollback()
	dbtest.Must(newOrder(ctx, first.Client(), o, conf))

	second, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := second.ExecContext(ctx, "SET lock_timeout = '3s'"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = second.ExecContext(ctx, fmt.Sprintf(`INSERT INTO orders (created_at, updated_at, price, status, customer_details, configurator_summary, owner_id, configurator_id)
		VALUES (now(), now(), 1, 'new', '{}', '{}', %d, %d)`, o, conf))
	if err != nil {
		t.Fatalf("a second order while the first's transaction is open: %v (after %v)", err, time.Since(start))
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, db, "two concurrent orders")
	var slots int
	if err := db.QueryRow("SELECT count(*) FROM order_counts").Scan(&slots); err != nil {
		t.Fatal(err)
	}
	if slots != 2 {
		t.Errorf("%d order_counts rows; want 2 (the second order counted in a slot of its own)", slots)
	}
}

// TestOrderCountsParallelWriters creates and deletes orders of two
// configurators from many transactions at once, some of which roll back,
// and checks that the totals are exact, those of every month and day too
// (so every range's), and that a key and a period keep few rows.
func TestOrderCountsParallelWriters(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := dbtest.Sys
			url := b.URL(t)
			c := dbtest.Open(t, url)
			db := dbtest.SQL(t, url)
			A := dbtest.NewTenant(t, c, "A", "Sofa", "Chair")
			o, confs := A.ID, []int{A.Confs[0].ID, A.Confs[1].ID}
			writers, rounds := 12, 25
			if b.Name == "sqlite" {
				writers, rounds = 4, 10
			}
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 1))
					var mine []int
					for range rounds {
						err := func() error {
							tx, err := c.Tx(ctx)
							if err != nil {
								return err
							}
							defer tx.Rollback()
							var made []int
							for range 1 + r.IntN(3) {
								ord, err := newOrder(ctx, tx.Client(), o, confs[r.IntN(100)/90]) // mostly the first
								if err != nil {
									return err
								}
								made = append(made, ord.ID)
							}
							kept := mine
							if len(mine) > 0 && r.IntN(2) == 0 {
								if err := tx.Order.DeleteOneID(mine[0]).Exec(ctx); err != nil {
									return err
								}
								kept = mine[1:]
							}
							if r.IntN(5) == 0 {
								return tx.Rollback()
							}
							if err := tx.Commit(); err != nil {
								return err
							}
							mine = append(kept, made...)
							return nil
						}()
						if err != nil && !busy(err) {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			checkCounts(t, db, "parallel writers")
			var orders, most int
			if err := db.QueryRow("SELECT count(*) FROM orders").Scan(&orders); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM order_counts GROUP BY owner_id, configurator_id) k").Scan(&most); err != nil {
				t.Fatal(err)
			}
			if orders == 0 || most > database.CountSlots || (b.Name == "sqlite" && most != 1) {
				t.Errorf("%d orders, a key with %d rows; want orders, and at most %d rows a key (1 on SQLite)", orders, most, database.CountSlots)
			}
			if err := db.QueryRow("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM order_date_counts GROUP BY owner_id, configurator_id, month, day) k").Scan(&most); err != nil {
				t.Fatal(err)
			}
			if most > database.CountSlots || (b.Name == "sqlite" && most != 1) {
				t.Errorf("a period with %d rows; want at most %d rows a period (1 on SQLite)", most, database.CountSlots)
			}
		})
	}
}

// busy reports SQLite's refusal of a second writer, or a deadlock of two
// transactions that each wrote one configurator's orders and then the
// other's: callers retry them; the test's transactions just end there.
func busy(err error) bool {
	for _, s := range []string{"SQLITE_BUSY", "database is locked", "deadlock detected"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestMigrateOrderCounts migrates a database whose order counts have the
// shape of the releases before slots (one row per owner and configurator,
// a unique index on the two, triggers that upsert on it, no counts by
// date), written by those triggers: the counts are kept, the counts by
// month and day are filled from the orders, orders are counted afterwards,
// writing the old shape's columns alone (bench/after-load.sql did) still
// works, and migrating again changes nothing.
func TestMigrateOrderCounts(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c := dbtest.Open(t, url)
			A := dbtest.NewTenant(t, c, "A", "Sofa", "Chair")
			o, a, b2 := A.ID, A.Confs[0].ID, A.Confs[1].ID
			c.Close()

			db := dbtest.SQL(t, url)
			old := oldPostgresCounts
			var first []string
			if b.Name == "sqlite" {
				old = oldSQLiteCounts
				first = []string{"DROP TRIGGER order_counts_insert", "DROP TRIGGER order_counts_delete", "DROP TRIGGER order_counts_update",
					"DROP TRIGGER order_date_counts_insert", "DROP TRIGGER order_date_counts_delete", "DROP TRIGGER order_date_counts_update"}
			}
			first = append(first, "DROP TABLE order_date_counts") // the old releases had no counts by date
			for _, q := range append(append(first,
				"DROP INDEX ordercount_owner_id_configurator_id_slot",
				"ALTER TABLE order_counts DROP COLUMN slot",
				"CREATE UNIQUE INDEX ordercount_owner_id_configurator_id ON order_counts (owner_id, configurator_id)",
			), old...) {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("simulate the old schema: %s: %v", q, err)
				}
			}
			insert := func(conf, n int) {
				t.Helper()
				for range n {
					if _, err := db.Exec(fmt.Sprintf(`INSERT INTO orders (created_at, updated_at, price, status, customer_details, configurator_summary, owner_id, configurator_id)
						VALUES (CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 1, 'new', '{}', '{}', %d, %d)`, o, conf)); err != nil {
						t.Fatal(err)
					}
				}
			}
			insert(a, 5)
			insert(b2, 2)
			if _, err := db.Exec(fmt.Sprintf("DELETE FROM orders WHERE id = (SELECT min(id) FROM orders WHERE configurator_id = %d)", a)); err != nil {
				t.Fatal(err)
			}
			var rows int
			if err := db.QueryRow("SELECT count(*) FROM order_counts").Scan(&rows); err != nil || rows != 2 {
				t.Fatalf("the old shape: %d rows (%v); want 2", rows, err)
			}
			if kept, real := countsOf(t, db); !maps.Equal(kept, real) {
				t.Fatalf("the old shape: order_counts says %v; the orders are %v", kept, real)
			}

			for i := range 2 {
				c, err := database.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				if err := database.Migrate(context.Background(), c, url); err != nil {
					t.Fatalf("migration %d: %v", i, err)
				}
				c.Close()
				if kept, _ := countsOf(t, db); kept[key{o, a}] != 4+i || kept[key{o, b2}] != 2 {
					t.Fatalf("after migration %d: counts %v; want %d and 2", i, kept, 4+i)
				}
				insert(a, 1)
				checkCounts(t, db, fmt.Sprintf("an order after migration %d", i))
			}
			var slots string
			if err := db.QueryRow("SELECT " + map[string]string{"sqlite": "group_concat(slot)", "postgres": "string_agg(slot::text, ',')"}[b.Name] +
				" FROM order_counts").Scan(&slots); err != nil || slots != "0,0" {
				t.Errorf("slots after migrating with no concurrent orders: %q (%v); want the old rows as slot 0", slots, err)
			}
			if _, err := db.Exec("DROP INDEX ordercount_owner_id_configurator_id"); err == nil {
				t.Errorf("the old unique index is still there")
			}
			// The old shape's columns alone: slot defaults to 0.
			for _, q := range []string{
				"DELETE FROM order_counts",
				"INSERT INTO order_counts (owner_id, configurator_id, orders) SELECT owner_id, configurator_id, count(*) FROM orders GROUP BY owner_id, configurator_id",
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			insert(b2, 1)
			checkCounts(t, db, "a recount in the old shape's columns, then an order")
		})
	}
}

// oldPostgresCounts and oldSQLiteCounts are the order count triggers of
// the releases before slots.
var (
	oldPostgresCounts = []string{`
CREATE OR REPLACE FUNCTION order_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts (owner_id, configurator_id, orders)
    SELECT owner_id, configurator_id, count(*) FROM new_rows GROUP BY owner_id, configurator_id
  ON CONFLICT (owner_id, configurator_id) DO UPDATE SET orders = order_counts.orders + EXCLUDED.orders;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION order_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE order_counts c SET orders = c.orders - d.n
    FROM (SELECT owner_id, configurator_id, count(*) AS n FROM old_rows GROUP BY owner_id, configurator_id) d
    WHERE c.owner_id = d.owner_id AND c.configurator_id = d.configurator_id;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION order_counts_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE order_counts c SET orders = c.orders - d.n
    FROM (SELECT owner_id, configurator_id, count(*) AS n FROM old_rows GROUP BY owner_id, configurator_id) d
    WHERE c.owner_id = d.owner_id AND c.configurator_id = d.configurator_id;
  INSERT INTO order_counts (owner_id, configurator_id, orders)
    SELECT owner_id, configurator_id, count(*) FROM new_rows GROUP BY owner_id, configurator_id
  ON CONFLICT (owner_id, configurator_id) DO UPDATE SET orders = order_counts.orders + EXCLUDED.orders;
  RETURN NULL;
END $$;
DROP FUNCTION order_counts_bump(bigint, bigint, bigint);
DROP FUNCTION order_date_counts_bump(bigint, bigint, boolean, date, bigint);
ALTER TABLE order_counts RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold);`}
	oldSQLiteCounts = []string{`
CREATE TRIGGER IF NOT EXISTS order_counts_insert AFTER INSERT ON orders BEGIN
  INSERT INTO order_counts (owner_id, configurator_id, orders) VALUES (NEW.owner_id, NEW.configurator_id, 1)
  ON CONFLICT (owner_id, configurator_id) DO UPDATE SET orders = orders + 1;
END;
CREATE TRIGGER IF NOT EXISTS order_counts_delete AFTER DELETE ON orders BEGIN
  UPDATE order_counts SET orders = orders - 1 WHERE owner_id = OLD.owner_id AND configurator_id = OLD.configurator_id;
END;
CREATE TRIGGER IF NOT EXISTS order_counts_update AFTER UPDATE OF owner_id, configurator_id ON orders BEGIN
  UPDATE order_counts SET orders = orders - 1 WHERE owner_id = OLD.owner_id AND configurator_id = OLD.configurator_id;
  INSERT INTO order_counts (owner_id, configurator_id, orders) VALUES (NEW.owner_id, NEW.configurator_id, 1)
  ON CONFLICT (owner_id, configurator_id) DO UPDATE SET orders = orders + 1;
END;`}
)

// TestVacuumCounts checks that VacuumCounts vacuums order_counts on
// PostgreSQL (VACUUM runs outside a transaction block, through the pool)
// and does nothing, without error, on SQLite. (How many dead versions the
// vacuum could remove depends on the other tests' open transactions, so
// it checks that the vacuum ran, not what it removed.)
func TestVacuumCounts(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := dbtest.Sys
			url := b.URL(t)
			c := dbtest.Open(t, url)
			A := dbtest.NewTenant(t, c, "A", "Sofa")
			o, conf := A.ID, A.Confs[0].ID
			for range 3 {
				ord := dbtest.Must(newOrder(ctx, c, o, conf))
				if err := c.Order.DeleteOneID(ord.ID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := database.VacuumCounts(ctx, c); err != nil {
				t.Fatal(err)
			}
			if b.Name != "postgres" {
				return
			}
			db := database.Pool(c)
			var vacuums int
			err := db.QueryRowContext(ctx, `SELECT vacuum_count FROM pg_stat_user_tables, pg_stat_clear_snapshot()
				WHERE relid = 'order_counts'::regclass`).Scan(&vacuums)
			if err != nil {
				t.Fatal(err)
			}
			if vacuums != 1 {
				t.Errorf("order_counts vacuumed %d times; want 1", vacuums)
			}
		})
	}
}

// TestCountsVacuumerOnlyWithoutAutovacuum: on a PostgreSQL server with
// autovacuum on (a cluster of the test's own, PostgreSQL's default) the
// service runs no VACUUM of the counts (CountsVacuumer is nil: the
// migration's per-table settings leave it to PostgreSQL,
// docs/operations.md, Maintenance); with autovacuum off it does.
func TestCountsVacuumerOnlyWithoutAutovacuum(t *testing.T) {
	cl := dbtest.NewCluster(t)
	ctx := dbtest.Sys
	c := dbtest.Open(t, cl.URL)
	log := slog.New(slog.DiscardHandler)
	if database.CountsVacuumer(ctx, c, log) != nil {
		t.Error("autovacuum on: the service vacuums the counts itself; want it left to PostgreSQL")
	}
	db := database.Pool(c)
	for _, s := range []string{"ALTER SYSTEM SET autovacuum = off", "SELECT pg_reload_conf()"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var on string
		if err := db.QueryRowContext(ctx, "SHOW autovacuum").Scan(&on); err != nil {
			t.Fatal(err)
		}
		if on == "off" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not take autovacuum = off")
		}
	}
	if database.CountsVacuumer(ctx, c, log) == nil {
		t.Error("autovacuum off: nothing vacuums the counts; want the service to")
	}
}
