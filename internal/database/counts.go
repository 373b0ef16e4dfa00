package database

import (
	"context"
	"fmt"

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

// postgresCounts creates the PostgreSQL triggers; it is idempotent.
const postgresCounts = `
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
CREATE OR REPLACE FUNCTION order_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM order_counts;
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

// sqliteCounts creates the SQLite triggers; it is idempotent.
const sqliteCounts = `
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
END;
`

// recount fills order_counts from the orders themselves.
const recount = `
DELETE FROM order_counts;
INSERT INTO order_counts (owner_id, configurator_id, orders)
  SELECT owner_id, configurator_id, count(*) FROM orders GROUP BY owner_id, configurator_id;
`

// installCounts creates the triggers that keep order_counts exact and,
// when they are new, counts the orders already there, in one transaction
// that keeps order writers out until the counts and the triggers are in
// place.
func installCounts(ctx context.Context, c *ent.Client, dialectName string) error {
	tx, err := c.Tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var exists, create string
	switch dialectName {
	case dialect.Postgres:
		if _, err := tx.ExecContext(ctx, "LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return fmt.Errorf("lock orders: %w", err)
		}
		exists = "SELECT count(*) FROM pg_trigger WHERE tgname = 'order_counts_insert' AND tgrelid = 'orders'::regclass"
		create = postgresCounts
	case dialect.SQLite:
		exists = "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'order_counts_insert'"
		create = sqliteCounts
	default:
		return fmt.Errorf("order counts: unsupported dialect %s", dialectName)
	}
	rows, err := tx.QueryContext(ctx, exists)
	if err != nil {
		return fmt.Errorf("look for the order count triggers: %w", err)
	}
	var n int
	for rows.Next() {
		err = rows.Scan(&n)
	}
	rows.Close()
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("create the order count triggers: %w", err)
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, recount); err != nil {
			return fmt.Errorf("count the orders: %w", err)
		}
	}
	return tx.Commit()
}
