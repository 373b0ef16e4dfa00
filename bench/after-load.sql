-- Runs right after ../shared/bench/load-product.sql has copied the reference
-- dataset into the product's tables (compare.sh calls it). The copy writes
-- rows directly; the derived data the product keeps is rebuilt here so that
-- it is exact whatever the copy did: the order counts behind the exact
-- totals of the order list, one row (slot 0) per owner and configurator, and
-- those of date ranges, one row (slot 0) per owner, configurator and UTC
-- month or day (internal/database/counts.go and datecounts.go keep them
-- exact afterwards through triggers). Idempotent.
BEGIN;
LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE;
DELETE FROM order_counts;
INSERT INTO order_counts (owner_id, configurator_id, slot, orders)
  SELECT owner_id, configurator_id, 0, count(*) FROM orders GROUP BY owner_id, configurator_id;
DELETE FROM order_date_counts;
INSERT INTO order_date_counts (owner_id, configurator_id, month, day, slot, orders)
  SELECT owner_id, configurator_id, p.month, p.day, 0, count(*) FROM orders CROSS JOIN LATERAL (VALUES
      (false, (created_at AT TIME ZONE 'UTC')::date),
      (true, date_trunc('month', created_at AT TIME ZONE 'UTC')::date)) p(month, day)
  GROUP BY 1, 2, 3, 4;
COMMIT;
VACUUM ANALYZE order_counts, order_date_counts;
