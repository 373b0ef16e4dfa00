package database

import (
	"fmt"

	"entgo.io/ent/dialect"
)

// The order_date_counts table (ent/schema/orderdatecount.go) holds the
// number of orders of each owner and configurator created in each UTC
// month and in each UTC day, so that the exact total of an order list
// filtered by a range of whole days (start_date and end_date, inclusive
// UTC days) is the sum of its whole months and of the days at its ends: a
// few dozen rows however many orders the range holds. Counting the
// range's entries of the (owner, created_at, id) index instead costs in
// proportion to the range (W3 at 2,000,000 orders: 12,573 entries, 4.1 of
// its 4.2 ms, most of it visibility-map lookups, since created_at is
// uncorrelated with the heap order; bench/RESULTS.md).
//
// Months and days both, rather than days alone: a range of two years of
// one configurator is 24 month rows and at most 60 day rows, against 730
// day rows, and for every configurator of an owner twenty times that.
// Measured on the 2,000,000-order reference dataset (20 configurators,
// two years; EXPLAIN ANALYZE, three runs): W3's total (one configurator,
// 2024-03-01 to 2024-06-01) took 0.16-0.18 ms from months and days (4
// rows), 0.41-0.52 ms from days alone (93 rows), 2.8-3.1 ms counting the
// orders (12,668 index entries); every configurator over 23 months,
// 0.77-0.93 ms (560 rows), 1.9-2.2 ms (some 13,000 rows) and 107-121 ms
// (960,000 entries). It costs every order a second counter row to update
// (three in all with order_counts), each chosen as order_counts' are (FOR
// NO KEY UPDATE SKIP LOCKED, a new slot only when every row of the period
// is held), so concurrent orders of one configurator still do not wait
// for each other; and each period's rows stop changing once it is over. The triggers are
// those of order_counts (counts.go): on PostgreSQL the same per-statement
// functions update both tables; on SQLite, row triggers of their own.
//
// A day is the UTC date of created_at: on PostgreSQL created_at AT TIME
// ZONE 'UTC' (a timestamptz), on SQLite the first ten characters of the
// stored text, which is what SQLite's comparison of created_at with the
// list's bounds (text too) sees: the total and the rows listed agree
// there, whatever zone the writer's clock was in.

// postgresDateCounts creates the PostgreSQL function that adds n to a
// period's count; the trigger functions of counts.go call it.
var postgresDateCounts = `
CREATE OR REPLACE FUNCTION order_date_counts_bump(o bigint, c bigint, m boolean, d date, n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF n = 0 THEN RETURN; END IF;
  UPDATE order_date_counts SET orders = orders + n WHERE id = (
    SELECT id FROM order_date_counts WHERE owner_id = o AND configurator_id = c AND month = m AND day = d
    LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED);
  IF NOT FOUND THEN
    INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders)
      VALUES (o, c, m, d, coalesce((SELECT s FROM generate_series(0, ` + fmt.Sprint(countSlots-1) + `) s
        WHERE NOT EXISTS (SELECT FROM order_date_counts WHERE owner_id = o AND configurator_id = c AND month = m AND day = d AND slot = s)
        ORDER BY random() LIMIT 1), floor(random() * ` + fmt.Sprint(countSlots) + `)::int), n)
    ON CONFLICT (owner_id, configurator_id, month, day, slot) DO UPDATE SET orders = order_date_counts.orders + EXCLUDED.orders;
  END IF;
END $$;
`

// postgresPeriods are the two periods (month, day) of each row of a
// transition table, for a FROM list: periods(t) is t's rows, each twice.
func postgresPeriods(rows string) string {
	return rows + ` CROSS JOIN LATERAL (VALUES
      (false, (created_at AT TIME ZONE 'UTC')::date),
      (true, date_trunc('month', created_at AT TIME ZONE 'UTC')::date)) p(month, day)`
}

// sqliteDay and sqliteMonth are the day and the month (its first day) of
// an order's created_at on SQLite, given the column's reference.
func sqliteDay(col string) string   { return "substr(" + col + ", 1, 10)" }
func sqliteMonth(col string) string { return "substr(" + col + ", 1, 8) || '01'" }

// sqliteDateCounts creates the SQLite triggers of order_date_counts (slot
// 0 only); they replace those of an older release.
var sqliteDateCounts = `
DROP TRIGGER IF EXISTS order_date_counts_insert;
DROP TRIGGER IF EXISTS order_date_counts_delete;
DROP TRIGGER IF EXISTS order_date_counts_update;
CREATE TRIGGER order_date_counts_insert AFTER INSERT ON orders BEGIN
  ` + sqliteBumpPeriods("NEW", "1") + `
END;
CREATE TRIGGER order_date_counts_delete AFTER DELETE ON orders BEGIN
  ` + sqliteBumpPeriods("OLD", "-1") + `
END;
CREATE TRIGGER order_date_counts_update AFTER UPDATE OF owner_id, configurator_id, created_at ON orders BEGIN
  ` + sqliteBumpPeriods("OLD", "-1") + `
  ` + sqliteBumpPeriods("NEW", "1") + `
END;
`

// sqliteBumpPeriods adds n to the day and month counts of the order row
// (NEW or OLD) of a trigger.
func sqliteBumpPeriods(row, n string) string {
	values := func(month, day string) string {
		return "(" + row + ".owner_id, " + row + ".configurator_id, " + month + ", " + day + ", 0, " + n + ")"
	}
	return "INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders) VALUES " +
		values("0", sqliteDay(row+".created_at")) + ", " + values("1", sqliteMonth(row+".created_at")) +
		"\n  ON CONFLICT (owner_id, configurator_id, month, day, slot) DO UPDATE SET orders = orders + excluded.orders;"
}

// recountDates fills order_date_counts from the orders themselves, one
// row (slot 0) per period, on each database.
var recountDates = map[string]string{
	dialect.Postgres: `
DELETE FROM order_date_counts;
INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders)
  SELECT owner_id, configurator_id, p.month, p.day, 0, count(*) FROM ` + postgresPeriods("orders") + `
  GROUP BY 1, 2, 3, 4;
`,
	dialect.SQLite: `
DELETE FROM order_date_counts;
INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders)
  SELECT owner_id, configurator_id, 0, ` + sqliteDay("created_at") + `, 0, count(*) FROM orders GROUP BY 1, 2, 4;
INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders)
  SELECT owner_id, configurator_id, 1, ` + sqliteMonth("created_at") + `, 0, count(*) FROM orders GROUP BY 1, 2, 4;
`,
}
